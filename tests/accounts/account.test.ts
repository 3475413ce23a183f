import { beforeAll, describe, expect, it } from "vitest";
import { useTestServer } from "../helpers/fixtures.js";
import { cookiesOf, uniqueEmail, type TestServer } from "../helpers/server.js";
import { linkIn, mailbox } from "../helpers/mailbox.js";
import { signUp } from "../helpers/oauth.js";
import { ACCOUNT_RESPONSE_ERROR_CODES } from "../../plugins/account-responses/error-codes.js";

/**
 * better-auth's default account surface under /api/auth, black-box, against the shapes in
 * SPEC.md "Default account surface", "Authentication" and "Errors".
 */

const PASSWORD = "correct horse battery staple";
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

function expectJson(res: { headers: Headers }) {
  expect(res.headers.get("content-type")).toMatch(/^application\/json\b/);
}

/** better-auth's error shape for the default surface (spec, Errors 3): `message` is a string. */
function expectMessage(res: { status: number; headers: Headers; json: any }, status: number) {
  expect(res.status).toBe(status);
  expectJson(res);
  expect(typeof res.json?.message).toBe("string");
  expect(res.json.message.length).toBeGreaterThan(0);
}

function expectUser(user: any, email: string) {
  expect(user).toMatchObject({ email: email.toLowerCase(), emailVerified: expect.any(Boolean) });
  expect(typeof user.id).toBe("string");
  expect(typeof user.name).toBe("string");
  expect(user.createdAt).toMatch(ISO);
  expect(user.updatedAt).toMatch(ISO);
  expect(user).not.toHaveProperty("password");
}

function sessionCookieName(headers: Headers): string | undefined {
  return headers
    .getSetCookie()
    .map((c) => c.split("=")[0]!)
    .find((name) => name.endsWith("session_token"));
}

async function newAccount(server: TestServer, email = uniqueEmail("acct"), password = PASSWORD) {
  const res = await server.api("/api/auth/sign-up/email", { body: { name: "Ada Lovelace", email, password } });
  expect(res.status, res.text).toBe(200);
  return { email, password, cookie: cookiesOf(res.headers), token: res.json.token as string, user: res.json.user as { id: string; email: string } };
}

async function signIn(server: TestServer, email: string, password: string) {
  return server.api("/api/auth/sign-in/email", { body: { email, password } });
}

async function sessionOf(server: TestServer, init: { cookie?: string; headers?: Record<string, string> }) {
  const res = await server.api("/api/auth/get-session", init);
  expect(res.status).toBe(200);
  return res.json as null | { session: any; user: any };
}

describe("account surface (e-mail verification off)", () => {
  const box = mailbox();
  const server = useTestServer({}, { mailer: box.mailer });

  describe("POST /sign-up/email", () => {
    it("answers 200 with a session token and the new user, and sets the session cookie", async () => {
      const email = uniqueEmail("Signup").replace("signup", "SignUp");
      const res = await server.api("/api/auth/sign-up/email", { body: { name: "Ada Lovelace", email, password: PASSWORD } });
      expect(res.status).toBe(200);
      expectJson(res);
      expect(typeof res.json.token).toBe("string");
      expectUser(res.json.user, email);
      expect(res.json.user).toMatchObject({ name: "Ada Lovelace", image: null, emailVerified: false });
      expect(sessionCookieName(res.headers)).toBeDefined();
    });

    it("answers 422 with a message when the user already exists, in any letter case", async () => {
      const { email } = await newAccount(server);
      for (const again of [email, email.toUpperCase()]) {
        const res = await server.api("/api/auth/sign-up/email", { body: { name: "Someone Else", email: again, password: "another password 123" } });
        expectMessage(res, 422);
        expect(res.json).not.toHaveProperty("token");
      }
      // The first account's password still works: the attempt changed nothing.
      expect((await signIn(server, email, PASSWORD)).status).toBe(200);
    });

    it("refuses a missing or invalid field with 400 and a message", async () => {
      expectMessage(await server.api("/api/auth/sign-up/email", { body: { name: "X", email: "not-an-email", password: PASSWORD } }), 400);
      expectMessage(await server.api("/api/auth/sign-up/email", { body: { name: "X", email: uniqueEmail(), password: "short" } }), 400);
      expectMessage(await server.api("/api/auth/sign-up/email", { body: { email: uniqueEmail(), password: PASSWORD } }), 400);
    });
  });

  describe("POST /sign-in/email", () => {
    it("answers 200 with redirect false, a token and the user, and sets the session cookie", async () => {
      const { email } = await newAccount(server);
      const res = await signIn(server, email, PASSWORD);
      expect(res.status).toBe(200);
      expectJson(res);
      expect(res.json.redirect).toBe(false);
      expect(res.json.url ?? null).toBeNull();
      // Spec: url (nullable), there as null, not left out (plugins/account-responses).
      expect(res.json).toHaveProperty("url", null);
      expect(Object.keys(res.json).sort()).toEqual(["redirect", "token", "url", "user"]);
      expect(typeof res.json.token).toBe("string");
      expectUser(res.json.user, email);
      expect(sessionCookieName(res.headers)).toBeDefined();
    });

    it("answers 401 with a message for a wrong password, and the same for an unknown address", async () => {
      const { email } = await newAccount(server);
      const wrong = await signIn(server, email, "not the password");
      expectMessage(wrong, 401);
      expect(wrong.headers.getSetCookie().some((c) => /session_token=[^;]+/.test(c))).toBe(false);
      const unknown = await signIn(server, uniqueEmail("nobody"), "not the password");
      expectMessage(unknown, 401);
      expect(unknown.json.message).toBe(wrong.json.message);
    });
  });

  describe("GET /get-session", () => {
    it("answers null without credentials", async () => {
      const res = await server.api("/api/auth/get-session");
      expect(res.status).toBe(200);
      expectJson(res);
      expect(res.text.trim()).toBe("null");
    });

    it("answers session and user for the session cookie", async () => {
      const account = await newAccount(server);
      const res = await server.api("/api/auth/get-session", { cookie: account.cookie });
      expect(res.status).toBe(200);
      expectJson(res);
      const { session, user } = res.json;
      expect(session).toMatchObject({ token: account.token, userId: account.user.id });
      expect(typeof session.id).toBe("string");
      expect(session.expiresAt).toMatch(ISO);
      expect(session.createdAt).toMatch(ISO);
      expect(session.updatedAt).toMatch(ISO);
      expect(new Date(session.expiresAt).getTime()).toBeGreaterThan(Date.now());
      expectUser(user, account.email);
      expect(user.id).toBe(account.user.id);
    });

    it("accepts the session token as a bearer token (spec: bearerAuth), and nothing else as one", async () => {
      const account = await newAccount(server);
      const viaBearer = await sessionOf(server, { headers: { authorization: `Bearer ${account.token}` } });
      expect(viaBearer?.user.id).toBe(account.user.id);
      expect(viaBearer?.session.token).toBe(account.token);
      expect(await sessionOf(server, { headers: { authorization: `Bearer ${account.token.slice(0, -2)}xx` } })).toBeNull();
      expect(await sessionOf(server, { headers: { authorization: "Bearer not-a-session" } })).toBeNull();
      expect(await sessionOf(server, { headers: { authorization: `Basic ${Buffer.from(`${account.email}:${PASSWORD}`).toString("base64")}` } })).toBeNull();
    });
  });

  describe("POST /get-session (spec: GET and POST)", () => {
    it("answers null without credentials, as GET does", async () => {
      const res = await server.api("/api/auth/get-session", { method: "POST" });
      expect(res.status, res.text).toBe(200);
      expectJson(res);
      expect(res.text.trim()).toBe("null");
      const withBody = await server.api("/api/auth/get-session", { body: {} });
      expect(withBody.status, withBody.text).toBe(200);
      expect(withBody.text.trim()).toBe("null");
    });

    it("answers the same session and user as GET, by cookie and by bearer token", async () => {
      const account = await newAccount(server);
      for (const init of [{ cookie: account.cookie }, { headers: { authorization: `Bearer ${account.token}` } }]) {
        const viaGet = await sessionOf(server, init);
        const viaPost = await server.api("/api/auth/get-session", { ...init, body: {} });
        expect(viaPost.status, viaPost.text).toBe(200);
        expectJson(viaPost);
        expect(viaPost.headers.get("cache-control")).toBe("no-store");
        expect(viaPost.json).toEqual(viaGet);
        expect(viaPost.json.session).toMatchObject({ token: account.token, userId: account.user.id });
        expectUser(viaPost.json.user, account.email);
      }
    });

    it("keeps the POST checks: a cookie-bearing POST from another origin is refused with 403", async () => {
      const account = await newAccount(server);
      const evil = await server.api("/api/auth/get-session", { body: {}, cookie: account.cookie, headers: { origin: "https://evil.example" } });
      expect(evil.status, evil.text).toBe(403);
      expect(evil.json).not.toHaveProperty("session");
    });
  });

  describe("paths and methods without an endpoint", () => {
    it("answer 404 with better-auth's {message, code} body as JSON, not an empty body", async () => {
      const cases: [string, string][] = [
        ["GET", "/api/auth/no-such-endpoint"],
        ["POST", "/api/auth/no/such/endpoint"],
        ["GET", "/api/auth"],
        ["GET", "/api/auth/"],
        ["GET", "/api/auth/get-session/"],
        ["GET", "/api/auth//get-session"],
        // A method the endpoint does not take.
        ["GET", "/api/auth/sign-in/email"],
        ["DELETE", "/api/auth/get-session"],
        ["DELETE", "/api/auth/subscription/status"],
        // disabledPaths (auth.config.ts): better-auth answers a plain-text "Not Found" there.
        ["GET", "/api/auth/token"],
        ["POST", "/api/auth/device/token"],
        // Not an OAuth endpoint (lib/error-families.ts), though under /oauth2.
        ["GET", "/api/auth/oauth2/no-such-endpoint"],
      ];
      for (const [method, path] of cases) {
        const res = await server.api(path, { method, ...(method === "POST" ? { body: {} } : {}) });
        const label = `${method} ${path}: ${res.status} ${res.text}`;
        expect(res.status, label).toBe(404);
        expect(res.headers.get("content-type"), label).toMatch(/^application\/json\b/);
        expect(res.json, label).toEqual({ message: ACCOUNT_RESPONSE_ERROR_CODES.ENDPOINT_NOT_FOUND.message, code: "ENDPOINT_NOT_FOUND" });
      }
    });

    it("keep RFC 6749 error objects on the OAuth endpoints", async () => {
      for (const path of ["/api/auth/oauth2/token", "/api/auth/oauth2/introspect", "/api/auth/oauth2/revoke", "/api/auth/device/code"]) {
        const res = await server.api(path, { method: "GET" });
        expect(res.status, `${path}: ${res.text}`).toBe(404);
        expect(res.json, path).toEqual({ error: "invalid_request", error_description: expect.any(String) });
      }
    });

    it("leave the 404s endpoints answer themselves as they were", async () => {
      const account = await newAccount(server);
      // plugins/account-email: an unknown session id is the endpoint's own 404, with its own code.
      const res = await server.api("/api/auth/revoke-session", { cookie: account.cookie, body: { id: "no-such-session" } });
      expectMessage(res, 404);
      expect(res.json.code, res.text).toMatch(/\S/);
      expect(res.json.code, res.text).not.toBe("ENDPOINT_NOT_FOUND");
    });
  });

  describe("POST /sign-out", () => {
    it("answers success true and the session stops working, by cookie and by bearer", async () => {
      const account = await newAccount(server);
      const other = await signIn(server, account.email, PASSWORD);
      const res = await server.api("/api/auth/sign-out", { cookie: account.cookie, body: {} });
      expect(res.status).toBe(200);
      expectJson(res);
      expect(res.json).toEqual({ success: true });
      // The cookie is cleared...
      expect(res.headers.getSetCookie().some((c) => /session_token=;/.test(c) && /max-age=0/i.test(c))).toBe(true);
      // ...and the session is gone server-side, not just forgotten by this client.
      expect(await sessionOf(server, { cookie: account.cookie })).toBeNull();
      expect(await sessionOf(server, { headers: { authorization: `Bearer ${account.token}` } })).toBeNull();
      // Only that session: another session of the same user is untouched.
      expect((await sessionOf(server, { cookie: cookiesOf(other.headers) }))?.user.id).toBe(account.user.id);
    });
  });

  describe("POST /update-session", () => {
    it("answers the current session for an empty object", async () => {
      const account = await newAccount(server);
      const before = await sessionOf(server, { cookie: account.cookie });
      const res = await server.api("/api/auth/update-session", { cookie: account.cookie, body: {} });
      expect(res.status, res.text).toBe(200);
      expectJson(res);
      expect(res.json.session).toMatchObject({ id: before!.session.id, token: account.token, userId: account.user.id });
      expect(res.json.session.expiresAt).toMatch(ISO);
      expect((await sessionOf(server, { cookie: account.cookie }))?.session.id).toBe(before!.session.id);
    });

    it("answers the same with the session token as a bearer token", async () => {
      const account = await newAccount(server);
      const res = await server.api("/api/auth/update-session", { headers: { authorization: `Bearer ${account.token}` }, body: {} });
      expect(res.status, res.text).toBe(200);
      expectJson(res);
      expect(res.json.session).toMatchObject({ token: account.token, userId: account.user.id });
    });

    it("answers 401 with a message without a session", async () => {
      expectMessage(await server.api("/api/auth/update-session", { body: {} }), 401);
    });
  });

  describe("POST /verify-password", () => {
    it("answers status true for the right password and a 4xx with a message for a wrong one", async () => {
      const account = await newAccount(server);
      const ok = await server.api("/api/auth/verify-password", { cookie: account.cookie, body: { password: PASSWORD } });
      expect(ok.status).toBe(200);
      expectJson(ok);
      expect(ok.json).toEqual({ status: true });
      const bad = await server.api("/api/auth/verify-password", { cookie: account.cookie, body: { password: "not the password" } });
      expect(bad.status).toBeGreaterThanOrEqual(400);
      expect(bad.status).toBeLessThan(500);
      expectMessage(bad, bad.status);
      // A wrong guess does not end the session.
      expect((await sessionOf(server, { cookie: account.cookie }))?.user.id).toBe(account.user.id);
    });

    it("answers 401 without a session", async () => {
      expectMessage(await server.api("/api/auth/verify-password", { body: { password: PASSWORD } }), 401);
    });
  });

  describe("POST /change-password", () => {
    it("with revokeOtherSessions true returns a new token; every earlier session stops working", async () => {
      const account = await newAccount(server);
      const second = cookiesOf((await signIn(server, account.email, PASSWORD)).headers);
      const res = await server.api("/api/auth/change-password", {
        cookie: account.cookie,
        body: { currentPassword: PASSWORD, newPassword: "a brand new password", revokeOtherSessions: true },
      });
      expect(res.status, res.text).toBe(200);
      expectJson(res);
      expect(typeof res.json.token).toBe("string");
      expect(res.json.token).not.toBe(account.token);
      expectUser(res.json.user, account.email);

      expect(await sessionOf(server, { cookie: second })).toBeNull();
      expect(await sessionOf(server, { headers: { authorization: `Bearer ${account.token}` } })).toBeNull();
      expect((await sessionOf(server, { cookie: cookiesOf(res.headers) }))?.user.id).toBe(account.user.id);
      expect((await sessionOf(server, { headers: { authorization: `Bearer ${res.json.token}` } }))?.user.id).toBe(account.user.id);

      expectMessage(await signIn(server, account.email, PASSWORD), 401);
      expect((await signIn(server, account.email, "a brand new password")).status).toBe(200);
    });

    it("without revokeOtherSessions keeps the other sessions and returns token null", async () => {
      const account = await newAccount(server);
      const second = cookiesOf((await signIn(server, account.email, PASSWORD)).headers);
      const res = await server.api("/api/auth/change-password", { cookie: account.cookie, body: { currentPassword: PASSWORD, newPassword: "another new password" } });
      expect(res.status, res.text).toBe(200);
      expect(res.json.token).toBeNull();
      expectUser(res.json.user, account.email);
      expect((await sessionOf(server, { cookie: second }))?.user.id).toBe(account.user.id);
    });

    it("refuses a wrong current password with 400 and a message, and changes nothing", async () => {
      const account = await newAccount(server);
      const res = await server.api("/api/auth/change-password", { cookie: account.cookie, body: { currentPassword: "wrong password!", newPassword: "whatever new password" } });
      expectMessage(res, 400);
      expect((await signIn(server, account.email, PASSWORD)).status).toBe(200);
    });

    it("answers 401 without a session", async () => {
      expectMessage(await server.api("/api/auth/change-password", { body: { currentPassword: PASSWORD, newPassword: "whatever new password" } }), 401);
    });
  });

  describe("password reset: POST /request-password-reset, then POST /reset-password", () => {
    it("mails a link whose token sets a new password once; the old password and old sessions stop working", async () => {
      const account = await newAccount(server);
      const req = await server.api("/api/auth/request-password-reset", { body: { email: account.email, redirectTo: "/reset-password" } });
      expect(req.status).toBe(200);
      expectJson(req);
      expect(req.json.status).toBe(true);

      const mail = await box.latest(account.email, /reset/i);
      const link = linkIn(mail);
      expect(link.origin).toBe(server.url);
      // The mailed link checks the token and hands it to the page named in redirectTo.
      const follow = await server.api(link.pathname + link.search);
      expect(follow.status).toBe(302);
      const landing = new URL(follow.headers.get("location")!, server.url);
      expect(landing.pathname).toBe("/reset-password");
      const token = landing.searchParams.get("token");
      expect(token).toBeTruthy();

      const reset = await server.api("/api/auth/reset-password", { body: { token, newPassword: "the reset password" } });
      expect(reset.status, reset.text).toBe(200);
      expectJson(reset);
      expect(reset.json).toEqual({ status: true });

      expectMessage(await server.api("/api/auth/reset-password", { body: { token, newPassword: "a second reset" } }), 400);
      expectMessage(await signIn(server, account.email, PASSWORD), 401);
      expect((await signIn(server, account.email, "the reset password")).status).toBe(200);
      expectMessage(await signIn(server, account.email, "a second reset"), 401);
      // revokeSessionsOnPasswordReset: whoever held the old password loses their session.
      expect(await sessionOf(server, { cookie: account.cookie })).toBeNull();
    });

    it("answers an unknown address exactly like a known one and sends nothing", async () => {
      const nobody = uniqueEmail("nobody");
      const res = await server.api("/api/auth/request-password-reset", { body: { email: nobody, redirectTo: "/reset-password" } });
      expect(res.status).toBe(200);
      expect(res.json.status).toBe(true);
      await new Promise((r) => setTimeout(r, 200));
      expect(box.count(nobody)).toBe(0);
    });

    it("refuses a made-up token with 400 and a message", async () => {
      expectMessage(await server.api("/api/auth/reset-password", { body: { token: "made-up-token", newPassword: "whatever new password" } }), 400);
    });
  });

  describe("POST /change-email", () => {
    it("answers status, user and message, and keeps the address until the new one confirms (plugins/account-email)", async () => {
      const account = await newAccount(server);
      const newEmail = uniqueEmail("moved");
      const res = await server.api("/api/auth/change-email", { cookie: account.cookie, body: { newEmail, currentPassword: PASSWORD } });
      expect(res.status, res.text).toBe(200);
      expectJson(res);
      expect(res.json.status).toBe(true);
      expect(res.json.message).toBe("Verification email sent");
      expectUser(res.json.user, account.email);
      expect(res.json.user.id).toBe(account.user.id);

      const confirm = linkIn(await box.latest(newEmail, /confirm/i));
      expect((await sessionOf(server, { cookie: account.cookie }))?.user.email).toBe(account.email);
      const done = await server.api(confirm.pathname + confirm.search, { cookie: account.cookie });
      expect(done.status, done.text).toBe(200);
      expectUser(done.json.user, newEmail);
      expect((await sessionOf(server, { cookie: account.cookie }))?.user.email).toBe(newEmail);
      expectMessage(await signIn(server, account.email, PASSWORD), 401);
      expect((await signIn(server, newEmail, PASSWORD)).status).toBe(200);
    });

    it("never moves an account onto another account's address", async () => {
      const taken = await newAccount(server);
      const account = await newAccount(server);
      const res = await server.api("/api/auth/change-email", { cookie: account.cookie, body: { newEmail: taken.email, currentPassword: PASSWORD } });
      expect(res.status).toBe(200);
      expect(res.json.status).toBe(true);
      expect(res.json.message).not.toBe("Email updated");
      expect((await sessionOf(server, { cookie: account.cookie }))?.user.email).toBe(account.email);
      expect((await sessionOf(server, { cookie: taken.cookie }))?.user.email).toBe(taken.email);
    });

    it("refuses the same address with 400, and answers 401 without a session", async () => {
      const account = await newAccount(server);
      expectMessage(await server.api("/api/auth/change-email", { cookie: account.cookie, body: { newEmail: account.email } }), 400);
      expectMessage(await server.api("/api/auth/change-email", { body: { newEmail: uniqueEmail() } }), 401);
    });
  });

  describe("GET /list-sessions and POST /revoke-session (plugins/account-email)", () => {
    it("lists sessions without their tokens", async () => {
      const account = await newAccount(server);
      await signIn(server, account.email, PASSWORD);
      const res = await server.api("/api/auth/list-sessions", { cookie: account.cookie });
      expect(res.status, res.text).toBe(200);
      expectJson(res);
      expect(res.json).toHaveLength(2);
      for (const session of res.json) {
        expect(typeof session.id).toBe("string");
        expect(session.userId).toBe(account.user.id);
        expect(session).not.toHaveProperty("token");
      }
      expect(res.text).not.toContain(account.token);
    });

    it("revokes one of the caller's sessions by id; another account's session id is refused with 404 and lives on", async () => {
      const account = await newAccount(server);
      const second = await signIn(server, account.email, PASSWORD);
      const secondCookie = cookiesOf(second.headers);
      const mine = (await sessionOf(server, { cookie: secondCookie }))!.session.id as string;
      const stranger = await newAccount(server);
      const theirs = (await sessionOf(server, { cookie: stranger.cookie }))!.session.id as string;

      const refused = await server.api("/api/auth/revoke-session", { cookie: account.cookie, body: { id: theirs } });
      expectMessage(refused, 404);
      expect((await sessionOf(server, { cookie: stranger.cookie }))?.user.id).toBe(stranger.user.id);
      expectMessage(await server.api("/api/auth/revoke-session", { cookie: account.cookie, body: { id: "no-such-session" } }), 404);

      const res = await server.api("/api/auth/revoke-session", { cookie: account.cookie, body: { id: mine } });
      expect(res.status, res.text).toBe(200);
      expect(res.json).toEqual({ status: true });
      expect(await sessionOf(server, { cookie: secondCookie })).toBeNull();
      expect((await sessionOf(server, { cookie: account.cookie }))?.user.id).toBe(account.user.id);
    });
  });

  describe("POST /send-verification-email", () => {
    it("answers 400 with a message when e-mail verification is off (spec, Errors 5)", async () => {
      const account = await newAccount(server);
      const res = await server.api("/api/auth/send-verification-email", { cookie: account.cookie, body: { email: account.email } });
      expectMessage(res, 400);
      expect(box.count(account.email)).toBe(0);
    });
  });
});

describe("cross-site requests (better-auth's Origin / CSRF checks, on in tests as in production)", () => {
  const server = useTestServer();

  it("refuses a cookie-bearing POST from another origin with 403, and the session survives", async () => {
    const person = await signUp(server);
    const evil = await server.api("/api/auth/sign-out", { method: "POST", body: {}, cookie: person.cookie, headers: { origin: "https://evil.example" } });
    expect(evil.status).toBe(403);
    const still = await server.api("/api/auth/get-session", { cookie: person.cookie });
    expect(still.json?.user?.id).toBe(person.user.id);
    const same = await server.api("/api/auth/sign-out", { method: "POST", body: {}, cookie: person.cookie });
    expect(same.status).toBe(200);
  });

  it("refuses a callbackURL on another origin with 403", async () => {
    const res = await server.api("/api/auth/sign-up/email", {
      body: { name: "Callback", email: `cb-${Date.now()}@example.com`, password: PASSWORD, callbackURL: "https://evil.example/landing" },
    });
    expect(res.status).toBe(403);
    const reset = await server.api("/api/auth/request-password-reset", { body: { email: "nobody@example.com", redirectTo: "https://evil.example/reset" } });
    expect(reset.status).toBe(403);
  });
});

describe("account surface (REQUIRE_EMAIL_VERIFICATION=true)", () => {
  const box = mailbox();
  const server = useTestServer({ REQUIRE_EMAIL_VERIFICATION: "true" }, { mailer: box.mailer });

  async function verifiedAccount() {
    const email = uniqueEmail("verified");
    expect((await server.api("/api/auth/sign-up/email", { body: { name: "Grace Hopper", email, password: PASSWORD } })).status).toBe(200);
    const link = linkIn(await box.latest(email, /verify/i));
    const res = await server.api(link.pathname + link.search.replace(/&?callbackURL=[^&]*/, ""));
    expect(res.status, res.text).toBe(200);
    return { email, cookie: cookiesOf(res.headers), user: res.json.user };
  }

  it("sign-up sends a verification mail and opens no session; sign-in waits for verification", async () => {
    const email = uniqueEmail("unverified");
    const res = await server.api("/api/auth/sign-up/email", { body: { name: "Grace Hopper", email, password: PASSWORD } });
    expect(res.status).toBe(200);
    expectJson(res);
    expect(res.json.token).toBeNull();
    expectUser(res.json.user, email);
    expect(res.json.user.emailVerified).toBe(false);
    expect(sessionCookieName(res.headers)).toBeUndefined();

    const link = linkIn(await box.latest(email, /verify/i));
    expect(link.pathname).toBe("/api/auth/verify-email");
    expect(link.searchParams.get("token")).toBeTruthy();

    const early = await signIn(server, email, PASSWORD);
    expectMessage(early, 403);
    expect(early.json).not.toHaveProperty("token");
  });

  it("sign-up answers alike for a new and an existing address, and mails the existing owner a notice", async () => {
    const owner = await verifiedAccount();
    const fresh = uniqueEmail("newcomer");
    const body = (email: string) => ({ name: "Mallory", email, password: "another password 123" });
    const [again, first] = [await server.api("/api/auth/sign-up/email", { body: body(owner.email) }), await server.api("/api/auth/sign-up/email", { body: body(fresh) })];
    for (const res of [again, first]) {
      expect(res.status, res.text).toBe(200);
      expectJson(res);
      expect(res.json.token).toBeNull();
      expect(sessionCookieName(res.headers)).toBeUndefined();
      expect(Object.keys(res.json).sort()).toEqual(["token", "user"]);
      expect(res.json.user).toMatchObject({ name: "Mallory", emailVerified: false, image: null });
    }
    expect(Object.keys(again.json.user).sort()).toEqual(Object.keys(first.json.user).sort());
    expect(again.json.user.id).not.toBe(owner.user.id);
    // Each address gets one mail: a verification link for the new one, a notice for the owner.
    await box.latest(fresh, /verify/i);
    const notice = await box.latest(owner.email, /sign up/i);
    expect(linkIn(notice).pathname).toBe("/forgot-password");
    // The attempt changed nothing: the owner's password still works.
    expect((await signIn(server, owner.email, PASSWORD)).status).toBe(200);
  });

  it("GET /verify-email with the mailed token verifies the address, answers status and user, and signs in", async () => {
    const email = uniqueEmail("verify");
    await server.api("/api/auth/sign-up/email", { body: { name: "Grace Hopper", email, password: PASSWORD } });
    const link = linkIn(await box.latest(email, /verify/i));

    const res = await server.api(`/api/auth/verify-email?token=${encodeURIComponent(link.searchParams.get("token")!)}`);
    expect(res.status, res.text).toBe(200);
    expectJson(res);
    expect(res.json.status).toBe(true);
    expectUser(res.json.user, email);
    expect(res.json.user.emailVerified).toBe(true);
    const session = await sessionOf(server, { cookie: cookiesOf(res.headers) });
    expect(session?.user).toMatchObject({ email, emailVerified: true });

    const signedIn = await signIn(server, email, PASSWORD);
    expect(signedIn.status).toBe(200);
    expect(signedIn.json.user.emailVerified).toBe(true);
  });

  it("GET /verify-email refuses a forged or missing token with a 4xx and a message", async () => {
    expectMessage(await server.api("/api/auth/verify-email?token=not.a.token"), 401);
    const missing = await server.api("/api/auth/verify-email");
    expect(missing.status).toBe(400);
    expectJson(missing);
  });

  it("POST /send-verification-email answers status true when verification is on", async () => {
    const email = uniqueEmail("resend");
    await server.api("/api/auth/sign-up/email", { body: { name: "Grace Hopper", email, password: PASSWORD } });
    await box.latest(email, /verify/i);
    const before = box.count(email);
    const res = await server.api("/api/auth/send-verification-email", { body: { email } });
    expect(res.status).toBe(200);
    expectJson(res);
    expect(res.json).toEqual({ status: true });
    for (let i = 0; i < 40 && box.count(email) === before; i++) await new Promise((r) => setTimeout(r, 50));
    expect(box.count(email)).toBe(before + 1);
  });

  it("POST /change-email of a verified address changes it only after the new address confirms, verified", async () => {
    const account = await verifiedAccount();
    const newEmail = uniqueEmail("newhome");
    const res = await server.api("/api/auth/change-email", { cookie: account.cookie, body: { newEmail, currentPassword: PASSWORD } });
    expect(res.status, res.text).toBe(200);
    expect(res.json.status).toBe(true);
    expect(res.json.message).toBe("Verification email sent");
    expect(res.json.user.email).toBe(account.email);
    expect((await sessionOf(server, { cookie: account.cookie }))?.user.email).toBe(account.email);

    const confirm = linkIn(await box.latest(newEmail, /confirm/i));
    const done = await server.api(confirm.pathname + confirm.search, { cookie: account.cookie });
    expect(done.status, done.text).toBe(200);
    expect(done.json.user).toMatchObject({ email: newEmail, emailVerified: true });
    expect((await signIn(server, newEmail, PASSWORD)).status).toBe(200);
  });
});

describe("account routes refuse malformed requests with a 4xx, never a 500", () => {
  // Rate limiting is not under test here: each route gets several bad requests.
  const server = useTestServer({ RATE_LIMIT_ENABLED: "false" });
  let cookie: string;

  const ROUTES = [
    "/api/auth/sign-up/email",
    "/api/auth/sign-in/email",
    "/api/auth/sign-out",
    "/api/auth/update-session",
    "/api/auth/verify-password",
    "/api/auth/change-password",
    "/api/auth/change-email",
    "/api/auth/request-password-reset",
    "/api/auth/reset-password",
    "/api/auth/send-verification-email",
  ];

  beforeAll(async () => {
    cookie = (await newAccount(server)).cookie;
  });

  function expectClientError(res: { status: number; headers: Headers; text: string }, route: string) {
    expect(res.status, `${route}: ${res.status} ${res.text.slice(0, 200)}`).toBeGreaterThanOrEqual(400);
    expect(res.status, route).toBeLessThan(500);
    expect(res.headers.get("content-type"), route).toMatch(/^application\/(problem\+)?json\b/);
    const body = JSON.parse(res.text);
    expect(typeof (body.message ?? body.detail), route).toBe("string");
  }

  it.each(ROUTES)("%s: malformed JSON", async (route) => {
    const res = await server.api(route, { cookie, body: '{"email": "a@example.com", "password": ' });
    expectClientError(res, route);
    expect(res.status, route).toBe(400);
  });

  it.each(ROUTES)("%s: JSON that is not an object", async (route) => {
    for (const body of ["[1,2,3]", "null", '"text"', "42"]) {
      const res = await server.api(route, { cookie, body });
      expectClientError(res, `${route} ${body}`);
    }
  });

  it.each(ROUTES)("%s: a content type other than JSON", async (route) => {
    const res = await server.api(route, { cookie, body: "email=a@example.com", headers: { "content-type": "text/plain" } });
    expectClientError(res, route);
    expect(res.status, route).toBe(415);
  });

  it.each(ROUTES)("%s: a 2 MB body", async (route) => {
    const body = JSON.stringify({ email: "a@example.com", password: "x".repeat(2 * 1024 * 1024) });
    const res = await server.api(route, { cookie, body });
    expectClientError(res, route);
    expect(res.status, route).toBe(413);
    // The next requests (pooled keep-alive connections) still get answers.
    for (let i = 0; i < 3; i++) expect((await server.api("/api/auth/get-session", { cookie })).status).toBe(200);
  });
});
