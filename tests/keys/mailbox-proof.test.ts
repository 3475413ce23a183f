import { randomBytes, randomUUID } from "node:crypto";
import { decodeJwt } from "jose";
import { describe, expect, it } from "vitest";
import { enrolKey, keySignIn as keySignInAt, newIdentity, registerIdentity as registerAt, type TestIdentity } from "../helpers/bap.js";
import { useTestServer } from "../helpers/fixtures.js";
import { linkIn, mailbox, resetPasswordByMail } from "../helpers/mailbox.js";
import { authorize, pkce, REDIRECT, registerClient, signUp, token } from "../helpers/oauth.js";
import { cookiesOf, uniqueEmail } from "../helpers/server.js";

/**
 * Pre-account hijacking: e-mail verification is off (the default), so anyone can sign up under
 * someone else's address and attach a way in of their own. When the owner proves the mailbox
 * (here: forgot-password), what was attached before stops working until the owner confirms it.
 */

const box = mailbox();
const server = useTestServer({}, { mailer: box.mailer });

const now = () => new Date();

/** The account's pubkey as stored (a session's cached copy of the user can lag behind with Redis). */
async function pubkeyOf(userId: string) {
  return (await server.db.selectFrom("user").select("pubkey").where("id", "=", userId).executeTakeFirstOrThrow()).pubkey as string | null;
}

async function registerIdentity(cookie: string, id: TestIdentity) {
  const res = await registerAt(server, cookie, id);
  expect(res.status, res.text).toBe(201);
  return res;
}

const keySignIn = (id: TestIdentity) => keySignInAt(server, id);

async function keySignUp(id: TestIdentity) {
  const res = await enrolKey(server, id);
  expect(res.status, res.text).toBe(200);
  return { cookie: cookiesOf(res.headers), userId: res.json.user.id as string };
}

async function identitiesOf(cookie: string) {
  const res = await server.api("/api/user/bap-ids", { cookie });
  expect(res.status).toBe(200);
  return res.json.bapIds as Array<{ identity_key: string; suspended: boolean; is_primary: boolean }>;
}

/** An account-page form post, from our own page (Origin) unless told otherwise. */
async function accountForm(cookie: string, action: string, fields: Record<string, string>, origin = server.url) {
  return server.api(action, { cookie, body: new URLSearchParams(fields).toString(), headers: { "content-type": "application/x-www-form-urlencoded", origin } });
}

/** The attacker's sign-up under the owner's address, with his own key, passkey and social account attached. */
async function hijackedAccount() {
  const email = uniqueEmail("owner");
  const attacker = await signUp(server, { email, password: "the attacker's password" });
  const key = newIdentity();
  await registerIdentity(attacker.cookie, key);
  await server.db
    .insertInto("passkey")
    .values({ id: randomUUID(), userId: attacker.user.id, publicKey: "pk", credentialID: randomBytes(16).toString("base64url"), counter: 0, deviceType: "singleDevice", backedUp: false, createdAt: now() })
    .execute();
  await server.db
    .insertInto("account")
    .values({ id: randomUUID(), accountId: `attacker-${randomUUID()}`, providerId: "github", userId: attacker.user.id, createdAt: now(), updatedAt: now() })
    .execute();
  expect((await keySignIn(key)).status).toBe(200);
  return { email, attacker, key, userId: attacker.user.id };
}

async function ownerResetsAndSignsIn(email: string) {
  const reset = await resetPasswordByMail(server, box, email, "the owner's new password");
  expect(reset.status, reset.text).toBe(200);
  const signIn = await server.api("/api/auth/sign-in/email", { body: { email, password: "the owner's new password" } });
  expect(signIn.status, signIn.text).toBe(200);
  return cookiesOf(signIn.headers);
}

describe("a mailbox proof suspends what was attached while the address was unverified", () => {
  it("the attacker's key identity is refused after the owner's password reset; his passkey, social account and session are gone", async () => {
    const { email, attacker, key, userId } = await hijackedAccount();
    const owner = await ownerResetsAndSignsIn(email);

    const refused = await keySignIn(key);
    expect(refused.status).toBe(403);
    expect(refused.json.code).toBe("IDENTITY_SUSPENDED");
    expect(cookiesOf(refused.headers)).not.toMatch(/session_token=/);
    expect((await server.api("/api/auth/get-session", { cookie: attacker.cookie })).json).toBeNull();
    expect(await server.db.selectFrom("passkey").select("id").where("userId", "=", userId).execute()).toEqual([]);
    expect((await server.db.selectFrom("account").select("providerId").where("userId", "=", userId).execute()).map((a) => a.providerId)).toEqual(["credential"]);

    // The owner sees it, suspended; it speaks for no one meanwhile (no pubkey on the account).
    expect(await identitiesOf(owner)).toEqual([expect.objectContaining({ identity_key: key.bapId, suspended: true })]);
    expect((await server.api("/api/auth/get-session", { cookie: owner })).json.user.emailVerified).toBe(true);
    expect(await pubkeyOf(userId)).toBeNull();
    const page = await server.api("/account/identities", { cookie: owner });
    expect(page.text).toContain("Suspended");
    expect(page.text).toContain("before you proved that you own its e-mail address");
  });

  it("a suspended identity is in no token: the owner's ID token and userinfo name no bap_id", async () => {
    const { email } = await hijackedAccount();
    const owner = await ownerResetsAndSignsIn(email);
    const client = await registerClient(server);
    const { verifier, challenge } = pkce();
    const granted = await authorize(server, { clientId: client.client_id, cookie: owner, challenge, scope: "openid profile" });
    const tokens = await token(server, { grant_type: "authorization_code", code: granted.code!, redirect_uri: REDIRECT, client_id: client.client_id, code_verifier: verifier });
    expect(tokens.status, tokens.text).toBe(200);
    const claims = decodeJwt(tokens.json.id_token);
    expect(claims).not.toHaveProperty("bap_id");
    expect(claims).not.toHaveProperty("pubkey");
    const userinfo = await server.api("/api/auth/oauth2/userinfo", { headers: { authorization: `Bearer ${tokens.json.access_token}` } });
    expect(userinfo.status).toBe(200);
    expect(userinfo.json).not.toHaveProperty("bap_id");
  });

  it("the owner confirms a suspended identity at the API, and it signs in again", async () => {
    const { email, key, userId } = await hijackedAccount();
    const owner = await ownerResetsAndSignsIn(email);
    const confirmed = await server.api("/api/user/bap-ids/confirm", { cookie: owner, body: { bapId: key.bapId } });
    expect(confirmed.status, confirmed.text).toBe(200);
    expect(confirmed.json.bapId).toMatchObject({ identity_key: key.bapId, suspended: false, is_primary: true });
    expect((await keySignIn(key)).status).toBe(200);
    expect(await pubkeyOf(userId)).toBe(key.pubkey);
  });

  it("the owner confirms one on the account page; a cross-site form changes nothing", async () => {
    const { email, key } = await hijackedAccount();
    const owner = await ownerResetsAndSignsIn(email);
    const crossSite = await accountForm(owner, "/account/identities/confirm", { bap_id: key.bapId }, "https://evil.example");
    expect(crossSite.status).toBe(403);
    expect((await keySignIn(key)).status).toBe(403);

    const res = await accountForm(owner, "/account/identities/confirm", { bap_id: key.bapId });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/account/identities?notice=identity-confirmed#identities");
    expect((await keySignIn(key)).status).toBe(200);
  });

  it("no one but the owner can confirm: not another account, not without a session", async () => {
    const { email, key } = await hijackedAccount();
    await ownerResetsAndSignsIn(email);
    const stranger = await signUp(server);
    const res = await server.api("/api/user/bap-ids/confirm", { cookie: stranger.cookie, body: { bapId: key.bapId } });
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect((await accountForm(stranger.cookie, "/account/identities/confirm", { bap_id: key.bapId })).headers.get("location")).toBe("/account/identities?error=NOT_FOUND#identities");
    expect((await server.api("/api/user/bap-ids/confirm", { body: { bapId: key.bapId } })).status).toBe(401);
    expect((await keySignIn(key)).status).toBe(403);
  });

  it("once the address is proven, what its owner adds later survives the next reset", async () => {
    const { email } = await hijackedAccount();
    const owner = await ownerResetsAndSignsIn(email);
    const own = newIdentity();
    await registerIdentity(owner, own);
    const again = await resetPasswordByMail(server, box, email, "yet another password");
    expect(again.status).toBe(200);
    expect((await keySignIn(own)).status).toBe(200);
  });

  it("a reset with a wrong token, or one that fails, suspends nothing", async () => {
    const { email, key } = await hijackedAccount();
    expect((await server.api("/api/auth/reset-password", { body: { token: "made-up-token", newPassword: "whatever new password" } })).status).toBe(400);
    // A real token with a password too short: the reset is refused, so it proves nothing yet.
    const short = await resetPasswordByMail(server, box, email, "short");
    expect(short.status).toBe(400);
    expect((await keySignIn(key)).status).toBe(200);
  });
});

describe("owners list and remove their BAP identities", () => {
  it("removes one at the API: its key no longer signs in, the other one becomes primary", async () => {
    const person = await signUp(server);
    const [first, second] = [newIdentity(), newIdentity()];
    await registerIdentity(person.cookie, first);
    await registerIdentity(person.cookie, second);
    const res = await server.api(`/api/user/bap-ids?bapId=${first.bapId}`, { method: "DELETE", cookie: person.cookie });
    expect(res.status, res.text).toBe(200);
    expect(await identitiesOf(person.cookie)).toEqual([expect.objectContaining({ identity_key: second.bapId, is_primary: true })]);
    expect((await keySignIn(first)).json.code).toBe("RESTORE_PROFILE_NOT_FOUND");
    expect(await pubkeyOf(person.user.id)).toBe(second.pubkey);
  });

  it("removes one from the account page; a cross-site form is refused", async () => {
    const person = await signUp(server);
    const id = newIdentity();
    await registerIdentity(person.cookie, id);
    expect((await accountForm(person.cookie, "/account/identities/remove", { bap_id: id.bapId }, "https://evil.example")).status).toBe(403);
    expect(await identitiesOf(person.cookie)).toHaveLength(1);
    const res = await accountForm(person.cookie, "/account/identities/remove", { bap_id: id.bapId });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/account/identities?notice=identity-removed#identities");
    expect(await identitiesOf(person.cookie)).toEqual([]);
  });

  it("refuses to remove another person's identity, at the API and on the page", async () => {
    const owner = await signUp(server);
    const id = newIdentity();
    await registerIdentity(owner.cookie, id);
    const stranger = await signUp(server);
    const res = await server.api(`/api/user/bap-ids?bapId=${id.bapId}`, { method: "DELETE", cookie: stranger.cookie });
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect((await accountForm(stranger.cookie, "/account/identities/remove", { bap_id: id.bapId })).headers.get("location")).toBe("/account/identities?error=NOT_FOUND#identities");
    expect((await server.api(`/api/user/bap-ids?bapId=${id.bapId}`, { method: "DELETE" })).status).toBe(401);
    expect(await identitiesOf(owner.cookie)).toHaveLength(1);
    expect((await keySignIn(id)).status).toBe(200);
  });

  it("refuses to remove the last way to sign in", async () => {
    const id = newIdentity();
    const keyOnly = await keySignUp(id);
    const res = await server.api(`/api/user/bap-ids?bapId=${id.bapId}`, { method: "DELETE", cookie: keyOnly.cookie });
    expect(res.status).toBe(409);
    expect(res.json.code).toBe("LAST_SIGN_IN_METHOD");
    expect((await accountForm(keyOnly.cookie, "/account/identities/remove", { bap_id: id.bapId })).headers.get("location")).toBe("/account/identities?error=LAST_SIGN_IN_METHOD#identities");
    expect((await keySignIn(id)).status).toBe(200);
  });
});

describe("with REQUIRE_EMAIL_VERIFICATION=true, verifying the address is the proof", () => {
  const verifyBox = mailbox();
  const strict = useTestServer({ REQUIRE_EMAIL_VERIFICATION: "true" }, { mailer: verifyBox.mailer });

  /** Follows a mailed link as a browser without cookies would; answers the cookies it set. */
  async function follow(to: string, subject: RegExp) {
    const link = linkIn(await verifyBox.latest(to, subject));
    const res = await strict.api(link.pathname + link.search);
    expect(res.status, res.text).toBeLessThan(400);
    return cookiesOf(res.headers);
  }

  it("a key account moved onto the owner's address keeps no working key once the owner verifies it", async () => {
    const key = newIdentity();
    const enrolled = await enrolKey(strict, key);
    expect(enrolled.status, enrolled.text).toBe(200);
    const attacker = cookiesOf(enrolled.headers);
    // The attacker asks to move his key account onto the owner's address: nothing moves until
    // the new address confirms (plugins/account-email).
    const email = uniqueEmail("victim");
    expect((await strict.api("/api/auth/change-email", { cookie: attacker, body: { newEmail: email } })).status).toBe(200);
    const userRow = () => strict.db.selectFrom("user").select(["email", "emailVerified"]).where("id", "=", enrolled.json.user.id).executeTakeFirstOrThrow();
    expect((await userRow()).email).not.toBe(email);
    // An account that reached the owner's address unverified all the same (the change-email of
    // earlier versions moved it at once; an operator's edit can): the proof must still hold.
    await strict.db.updateTable("user").set({ email }).where("id", "=", enrolled.json.user.id).execute();
    expect((await userRow()).email).toBe(email);
    const signIn = () => keySignInAt(strict, key);
    expect((await signIn()).status).toBe(200);

    // Later the owner asks for a verification mail for their address and follows it.
    verifyBox.mails.length = 0;
    expect((await strict.api("/api/auth/send-verification-email", { body: { email } })).status).toBe(200);
    const owner = await follow(email, /verify/i);
    expect((await strict.api("/api/auth/get-session", { cookie: owner })).json.user.emailVerified).toBe(true);

    const refused = await signIn();
    expect(refused.status).toBe(403);
    expect(refused.json.code).toBe("IDENTITY_SUSPENDED");
    expect((await strict.api("/api/auth/get-session", { cookie: attacker })).json).toBeNull();
    // The owner's session from the link survives, and can confirm or remove the identity.
    const listed = await strict.api("/api/user/bap-ids", { cookie: owner });
    expect(listed.json.bapIds).toEqual([expect.objectContaining({ identity_key: key.bapId, suspended: true })]);
  });
});
