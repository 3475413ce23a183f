import { describe, expect, it } from "vitest";
import { useTestServer } from "../helpers/fixtures.js";
import { fullCodeFlow, signUp } from "../helpers/oauth.js";
import { cookiesOf, uniqueEmail } from "../helpers/server.js";

/** A person's name and picture: bounded and safe where they are set, and where they are released. */
const server = useTestServer();

const BAD_IMAGES = [
  "javascript:alert(document.cookie)",
  "JAVASCRIPT:alert(1)",
  "data:text/html,<script>alert(1)</script>",
  "data:image/svg+xml;base64,PHN2Zz4=",
  "http://images.example.com/me.png",
  "https://user:pw@images.example.com/me.png",
  "/relative.png",
  `https://images.example.com/${"a".repeat(2030)}.png`,
];
const BIDI = ["\u202A", "\u202B", "\u202C", "\u202D", "\u202E", "\u2066", "\u2067", "\u2068", "\u2069", "\u200E", "\u200F", "\u061C"];
const BAD_NAMES = ["n".repeat(201), "x".repeat(200 * 1024), "tab\there", ...BIDI.map((c) => `Alice${c}gpj.exe`)];

const signUpWith = (body: Record<string, unknown>) =>
  server.api("/api/auth/sign-up/email", { body: { name: "Person", email: uniqueEmail(), password: "correct horse battery staple", ...body } });

function expectRefused(res: { status: number; json: any; text: string }, code: string, what: string) {
  expect(res.status, `${what}: ${res.text.slice(0, 120)}`).toBe(code === "too large" ? 413 : 400);
  if (code !== "too large") expect(res.json?.code, what).toBe(code);
}

describe("sign-up and update-user: name and image", () => {
  it("sign-up refuses a picture that is not an https URL", async () => {
    for (const image of BAD_IMAGES) expectRefused(await signUpWith({ image }), "INVALID_IMAGE", image.slice(0, 40));
  });

  it("sign-up refuses names that are too long or carry control characters, and accepts the rest", async () => {
    for (const name of BAD_NAMES) {
      const res = await signUpWith({ name });
      expectRefused(res, res.status === 413 ? "too large" : "INVALID_NAME", `name ${JSON.stringify(name.slice(0, 12))} (${name.length})`);
    }
    const ok = await signUpWith({ name: "n".repeat(200), image: `https://images.example.com/${"a".repeat(2000)}.png` });
    expect(ok.status, ok.text).toBe(200);
    const international = await signUpWith({ name: "Zoë Ångström — 山田 太郎 — مرحبا", image: "http://127.0.0.1:8080/me.png" });
    expect(international.status, international.text).toBe(200);
  });

  it("update-user refuses the same and keeps what was stored", async () => {
    const person = await signUp(server, { name: "Before" });
    for (const image of BAD_IMAGES) expectRefused(await server.api("/api/auth/update-user", { cookie: person.cookie, body: { image } }), "INVALID_IMAGE", image.slice(0, 40));
    for (const name of BAD_NAMES) {
      const res = await server.api("/api/auth/update-user", { cookie: person.cookie, body: { name } });
      expectRefused(res, res.status === 413 ? "too large" : "INVALID_NAME", `name ${JSON.stringify(name.slice(0, 12))} (${name.length})`);
    }
    const row = await server.db.selectFrom("user").select(["name", "image"]).where("id", "=", person.user.id).executeTakeFirstOrThrow();
    expect(row).toEqual({ name: "Before", image: null });
    const ok = await server.api("/api/auth/update-user", { cookie: person.cookie, body: { name: "After", image: "https://images.example.com/me.png" } });
    expect(ok.status, ok.text).toBe(200);
    const cleared = await server.api("/api/auth/update-user", { cookie: person.cookie, body: { image: null } });
    expect(cleared.status, cleared.text).toBe(200);
  });
});

describe("update-user: pubkey and subscriptionTier are read-only (stricter than the spec)", () => {
  it("refuses to set either, with a 4xx, and keeps what was stored", async () => {
    const person = await signUp(server);
    const attempts: Record<string, unknown>[] = [{ pubkey: `02${"ab".repeat(32)}` }, { subscriptionTier: "pro" }, { name: "Sneaky", subscriptionTier: "plus" }];
    for (const body of attempts) {
      const res = await server.api("/api/auth/update-user", { cookie: person.cookie, body });
      expect(res.status, `${JSON.stringify(body)}: ${res.text.slice(0, 160)}`).toBe(400);
    }
    const stored = await server.db.selectFrom("user").select(["pubkey", "subscriptionTier", "name"]).where("id", "=", person.user.id).executeTakeFirstOrThrow();
    expect(stored).toEqual({ pubkey: null, subscriptionTier: "free", name: "Test Person" });
    // Nor at sign-up: a tier asked for there is replaced by the default, a pubkey refused.
    const tiered = await signUpWith({ subscriptionTier: "pro" });
    expect(tiered.status).toBe(200);
    const tier = await server.db.selectFrom("user").select("subscriptionTier").where("id", "=", tiered.json.user.id).executeTakeFirstOrThrow();
    expect(tier.subscriptionTier).toBe("free");
    const withKey = await signUpWith({ pubkey: `03${"cd".repeat(32)}` });
    expect(withKey.status).toBe(400);
  });
});

describe("writers that cannot be refused (an administrator, a provider's profile)", () => {
  it("have controls removed, the name cut at 200 and an unsafe picture dropped before it is stored", async () => {
    const admin = await signUp(server, { name: "Admin" });
    await server.db.updateTable("user").set({ role: "admin" }).where("id", "=", admin.user.id).execute();
    const signIn = await server.api("/api/auth/sign-in/email", { body: { email: admin.email, password: admin.password } });
    const cookie = cookiesOf(signIn.headers);
    const target = await signUp(server, { name: "Target" });

    const res = await server.api("/api/auth/admin/update-user", { cookie, body: { userId: target.user.id, data: { name: `Ev\u202Eil\u2066 ${"n".repeat(300)}`, image: "javascript:alert(1)" } } });
    expect(res.status, res.text).toBe(200);
    const row = await server.db.selectFrom("user").select(["name", "image"]).where("id", "=", target.user.id).executeTakeFirstOrThrow();
    expect(row.image).toBeNull();
    expect(row.name).toBe(`Evil ${"n".repeat(195)}`);
  });
});

describe("the picture claim", () => {
  it("is released only when it is an https URL, whatever is stored", async () => {
    const { person, tokens } = await fullCodeFlow(server, { scope: "openid profile" });
    expect(tokens.status).toBe(200);
    const userinfo = () => server.api("/api/auth/oauth2/userinfo", { headers: { authorization: `Bearer ${tokens.json.access_token}` } });
    const store = (image: string | null) => server.db.updateTable("user").set({ image }).where("id", "=", person.user.id).execute();

    for (const image of ["javascript:alert(document.cookie)", "data:image/png;base64,AAAA", "http://127.0.0.1/me.png", "http://images.example.com/me.png"]) {
      await store(image);
      const res = await userinfo();
      expect(res.status).toBe(200);
      expect(res.json.picture, image).toBeUndefined();
      expect(res.json.name).toBe("Test Person");
    }
    await store("https://images.example.com/me.png");
    expect((await userinfo()).json.picture).toBe("https://images.example.com/me.png");
  });
});
