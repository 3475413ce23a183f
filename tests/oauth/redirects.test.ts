import { beforeAll, describe, expect, it } from "vitest";
import { useTestServer } from "../helpers/fixtures.js";
import { signUp } from "../helpers/oauth.js";

/**
 * Open redirects (CWE-601): every redirect target, ours (`return_to`) and better-auth's
 * (callbackURL, redirectTo, errorCallbackURL, newUserCallbackURL), is normalised and then
 * checked, so no Location ever leaves our origin through dot segments, encoded dots,
 * backslashes or control characters.
 */

const server = useTestServer();
let person: Awaited<ReturnType<typeof signUp>>;

beforeAll(async () => {
  person = await signUp(server);
}, 30_000);

/** Targets that a URL parser turns into `//evil.example/x` (another host), or that are ambiguous. */
const VARIANTS = [
  "//evil.example/x",
  "/.//evil.example/x",
  "/a/..//evil.example/x",
  "/%2e//evil.example/x",
  "/%2E//evil.example/x",
  "/%2e%2e//evil.example/x",
  "/a/%2e%2e//evil.example/x",
  "/\\evil.example/x",
  "/.\\/evil.example/x",
  "/./\\evil.example/x",
  "/\t/evil.example/x",
  "/.\t//evil.example/x",
  "/\n/evil.example/x",
  "/.%2f/evil.example/x",
];

/** Where a browser would go: a Location resolved against our own address. */
function staysHome(location: string | null): boolean {
  if (location === null) return true;
  return new URL(location, server.url).origin === server.url;
}

async function get(path: string) {
  return fetch(server.url + path, { redirect: "manual" });
}

describe("better-auth callback URLs", () => {
  for (const target of VARIANTS) {
    it(`verify-email refuses callbackURL ${JSON.stringify(target)}`, async () => {
      const res = await get(`/api/auth/verify-email?token=x&callbackURL=${encodeURIComponent(target)}`);
      expect(staysHome(res.headers.get("location")), `${res.status} ${res.headers.get("location")}`).toBe(true);
      expect(res.status).toBe(403);
      expect((await res.json()).code).toBe("INVALID_CALLBACK_URL");
    });

    it(`the reset-password callback refuses callbackURL ${JSON.stringify(target)}`, async () => {
      const res = await get(`/api/auth/reset-password/not-a-token?callbackURL=${encodeURIComponent(target)}`);
      expect(staysHome(res.headers.get("location")), `${res.status} ${res.headers.get("location")}`).toBe(true);
      expect(res.status).toBe(403);
    });
  }

  it("request-password-reset refuses a redirectTo that normalises to another host", async () => {
    const res = await server.api("/api/auth/request-password-reset", { body: { email: person.email, redirectTo: "/.//evil.example/x" } });
    expect(res.status).toBe(403);
    expect(res.json.code).toBe("INVALID_REDIRECT_URL");
  });

  it("social sign-in refuses errorCallbackURL and newUserCallbackURL that normalise to another host", async () => {
    const error = await server.api("/api/auth/sign-in/social", { body: { provider: "google", callbackURL: "/", errorCallbackURL: "/a/..//evil.example/x" } });
    expect(error.status).toBe(403);
    expect(error.json.code).toBe("INVALID_ERROR_CALLBACK_URL");
    const newUser = await server.api("/api/auth/sign-in/social", { body: { provider: "google", callbackURL: "/", newUserCallbackURL: "/%2e%2e//evil.example/x" } });
    expect(newUser.status).toBe(403);
    expect(newUser.json.code).toBe("INVALID_NEW_USER_CALLBACK_URL");
  });

  it("a plain path on our origin is still followed, dot segments resolved", async () => {
    const res = await get(`/api/auth/verify-email?token=x&callbackURL=${encodeURIComponent("/a/../account")}`);
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toMatch(/^\/account\?error=/);
  });
});

describe("return_to on the sign-in pages", () => {
  const signIn = (returnTo: string) =>
    fetch(`${server.url}/sign-in`, {
      method: "POST",
      redirect: "manual",
      headers: { origin: server.url, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ email: person.email, password: person.password, return_to: returnTo }),
    });

  for (const target of VARIANTS) {
    it(`POST /sign-in with return_to ${JSON.stringify(target)} lands on our own home page`, async () => {
      const res = await signIn(target);
      expect(res.status).toBe(303);
      expect(res.headers.get("location")).toBe("/");
    });

    it(`the sign-in and two-factor forms do not carry return_to ${JSON.stringify(target)}`, async () => {
      for (const page of ["/sign-in", "/sign-in/two-factor"]) {
        const res = await get(`${page}?return_to=${encodeURIComponent(target)}`);
        expect(res.status).toBe(200);
        const html = await res.text();
        expect(html).not.toContain('name="return_to"');
        expect(html).not.toContain("evil.example");
      }
    });
  }

  it("a path on our origin is honoured, normalised", async () => {
    const res = await signIn("/a/../device?user_code=ABCD");
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/device?user_code=ABCD");
    const page = await (await get(`/sign-in?return_to=${encodeURIComponent("/a/../device")}`)).text();
    expect(page).toContain('name="return_to" value="/device"');
  });
});
