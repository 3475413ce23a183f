import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keySignIn, newIdentity, registerIdentity } from "../helpers/bap.js";
import { signUp } from "../helpers/oauth.js";
import { cookiesOf, startTestServer, type TestServer } from "../helpers/server.js";
import { secretOf, totp } from "../helpers/totp.js";

/**
 * Key sign-in (POST /api/auth/sign-in/sigma) for an account with two-factor on stops at the
 * same second-factor step as password sign-in: `{twoFactorRedirect: true}`, no session, the
 * two-factor cookie; /two-factor/verify-totp then makes the session. KEY_SIGN_IN_SKIPS_TWO_FACTOR
 * makes the key a strong factor on its own.
 */

let server: TestServer;
let lenient: TestServer;
beforeAll(async () => {
  [server, lenient] = await Promise.all([startTestServer(), startTestServer({ KEY_SIGN_IN_SKIPS_TWO_FACTOR: "true" })]);
});
afterAll(async () => {
  await Promise.all([server?.close(), lenient?.close()]);
});

/** A password account with a registered key identity and two-factor (TOTP) on; answers the TOTP secret. */
async function personWithTwoFactor(on: TestServer) {
  const person = await signUp(on);
  const id = newIdentity();
  const registered = await registerIdentity(on, person.cookie, id);
  expect(registered.status, registered.text).toBe(201);
  const enabled = await on.api("/api/auth/two-factor/enable", { cookie: person.cookie, body: { password: person.password } });
  expect(enabled.status, enabled.text).toBe(200);
  const secret = secretOf(enabled.json.totpURI);
  const cookie = cookiesOf(enabled.headers) || person.cookie;
  const verified = await on.api("/api/auth/two-factor/verify-totp", { cookie, body: { code: totp(secret) } });
  expect(verified.status).toBe(200);
  // Turning two-factor on replaces the session: the cookie it sets is the person's now.
  return { ...person, cookie: cookiesOf(verified.headers) || cookie, id, secret };
}

describe("key sign-in with two-factor on", () => {
  it("answers twoFactorRedirect and the two-factor cookie, not a session, as password sign-in does", async () => {
    const person = await personWithTwoFactor(server);
    const sessionsOf = async () => (await server.db.selectFrom("session").select("id").where("userId", "=", person.user.id).execute()).length;
    const before = await sessionsOf();
    const byPassword = await server.api("/api/auth/sign-in/email", { body: { email: person.email, password: person.password } });
    const byKey = await keySignIn(server, person.id);
    for (const res of [byPassword, byKey]) {
      expect(res.status, res.text).toBe(200);
      expect(res.json).toEqual({ twoFactorRedirect: true, twoFactorMethods: ["totp"] });
      expect(cookiesOf(res.headers)).not.toMatch(/session_token=/);
      expect(cookiesOf(res.headers)).toMatch(/two_factor=/);
    }
    // No session was left behind for either to use.
    expect((await server.api("/api/auth/get-session", { cookie: cookiesOf(byKey.headers) })).json).toBeNull();
    expect(await sessionsOf()).toBe(before);

    const verified = await server.api("/api/auth/two-factor/verify-totp", { cookie: cookiesOf(byKey.headers), body: { code: totp(person.secret) } });
    expect(verified.status, verified.text).toBe(200);
    const session = (await server.api("/api/auth/get-session", { cookie: cookiesOf(verified.headers) })).json;
    expect(session.user.id).toBe(person.user.id);
  });

  it("signs in at once for an account without two-factor", async () => {
    const person = await signUp(server);
    const id = newIdentity();
    expect((await registerIdentity(server, person.cookie, id)).status).toBe(201);
    const res = await keySignIn(server, id);
    expect(res.status).toBe(200);
    expect(cookiesOf(res.headers)).toMatch(/session_token=/);
    expect(res.json.user.id).toBe(person.user.id);
  });

  it("with KEY_SIGN_IN_SKIPS_TWO_FACTOR=true the key alone signs in; the password still asks for the code", async () => {
    const person = await personWithTwoFactor(lenient);
    const byKey = await keySignIn(lenient, person.id);
    expect(byKey.status).toBe(200);
    expect(byKey.json.user.id).toBe(person.user.id);
    expect(cookiesOf(byKey.headers)).toMatch(/session_token=/);
    const byPassword = await lenient.api("/api/auth/sign-in/email", { body: { email: person.email, password: person.password } });
    expect(byPassword.json.twoFactorRedirect).toBe(true);
  });

  it("the account page says which sign-ins ask for the code", async () => {
    const strict = await personWithTwoFactor(server);
    const loose = await personWithTwoFactor(lenient);
    const strictPage = await server.api("/account/security", { cookie: strict.cookie });
    const loosePage = await lenient.api("/account/security", { cookie: loose.cookie });
    expect(strictPage.text).toContain("Signing in with your password or an identity key also asks for a code");
    expect(loosePage.text).toContain("Signing in with your password also asks for a code");
  });
});
