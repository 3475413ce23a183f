import { describe, expect, it } from "vitest";
import { useTestServer } from "../helpers/fixtures.js";
import { linkIn, mailbox } from "../helpers/mailbox.js";
import { authorize, pkce, REDIRECT, registerClient, token } from "../helpers/oauth.js";
import { cookiesOf, uniqueEmail } from "../helpers/server.js";

/**
 * POST /api/auth/change-email (plugins/account-email): a session alone cannot move an account
 * to another mailbox. Re-authentication first (password, or a session only seconds old here),
 * the change only when the new address confirms, and an undo link to the old address.
 */

const PASSWORD = "correct horse battery staple";
const REAUTH_WINDOW = 2;
const box = mailbox();
const server = useTestServer({ EMAIL_CHANGE_REAUTH_WINDOW: String(REAUTH_WINDOW) }, { mailer: box.mailer });

async function account(prefix = "mover") {
  const email = uniqueEmail(prefix);
  const res = await server.api("/api/auth/sign-up/email", { body: { name: "Mover", email, password: PASSWORD } });
  expect(res.status, res.text).toBe(200);
  return { email, cookie: cookiesOf(res.headers), id: res.json.user.id as string };
}

/** A session older than the re-authentication window. */
async function staleAccount(prefix?: string) {
  const a = await account(prefix);
  await new Promise((r) => setTimeout(r, REAUTH_WINDOW * 1000 + 300));
  return a;
}

async function emailOf(cookie: string): Promise<string | undefined> {
  return (await server.api("/api/auth/get-session", { cookie })).json?.user?.email;
}

async function signIn(email: string) {
  return server.api("/api/auth/sign-in/email", { body: { email, password: PASSWORD } });
}

async function follow(link: URL, cookie?: string) {
  return server.api(link.pathname + link.search, { cookie });
}

describe("POST /change-email asks for re-authentication", () => {
  it("refuses a session older than the window without currentPassword (403), and a wrong password (400); nothing is mailed or changed", async () => {
    const a = await staleAccount();
    const newEmail = uniqueEmail("thief");
    const bare = await server.api("/api/auth/change-email", { cookie: a.cookie, body: { newEmail } });
    expect(bare.status, bare.text).toBe(403);
    expect(bare.json).toMatchObject({ code: "REAUTHENTICATION_REQUIRED", message: expect.any(String) });
    const wrong = await server.api("/api/auth/change-email", { cookie: a.cookie, body: { newEmail, currentPassword: "not the password" } });
    expect(wrong.status, wrong.text).toBe(400);
    expect(wrong.json).toMatchObject({ code: "INVALID_PASSWORD" });
    expect(box.count(newEmail)).toBe(0);
    expect(box.count(a.email)).toBe(0);
    expect(await emailOf(a.cookie)).toBe(a.email);
  }, 15_000);

  it("takes a session signed in moments ago without a password", async () => {
    const a = await account();
    const newEmail = uniqueEmail("fresh");
    const res = await server.api("/api/auth/change-email", { cookie: a.cookie, body: { newEmail } });
    expect(res.status, res.text).toBe(200);
    expect(res.json.message).toBe("Verification email sent");
    await box.latest(newEmail, /confirm/i);
  });
});

describe("the change waits for the new address, and the old one can undo it", () => {
  it("mails a confirmation to the new address and a notice to the old; the address changes only on confirmation, once", async () => {
    const a = await staleAccount();
    const newEmail = uniqueEmail("newbox");
    const res = await server.api("/api/auth/change-email", { cookie: a.cookie, body: { newEmail, currentPassword: PASSWORD } });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({ status: true, message: "Verification email sent", user: { id: a.id, email: a.email } });

    const confirm = linkIn(await box.latest(newEmail, /confirm/i));
    const notice = await box.latest(a.email, /being changed/i);
    expect(notice.text).toContain(newEmail);
    expect(linkIn(notice).pathname).toBe("/api/auth/change-email/undo");

    // Nothing changed yet: the old address still signs in, the new one does not.
    expect(await emailOf(a.cookie)).toBe(a.email);
    expect((await signIn(a.email)).status).toBe(200);
    expect((await signIn(newEmail)).status).toBe(401);

    const done = await follow(confirm);
    expect(done.status, done.text).toBe(200);
    expect(done.json.user).toMatchObject({ id: a.id, email: newEmail, emailVerified: true });
    expect(await emailOf(a.cookie)).toBe(newEmail);
    expect((await signIn(newEmail)).status).toBe(200);
    expect((await signIn(a.email)).status).toBe(401);

    const again = await follow(confirm);
    expect(again.status).toBe(400);
    expect(again.json).toMatchObject({ code: "INVALID_TOKEN" });
  }, 15_000);

  it("the undo link puts the old address back and ends every session and OAuth grant; it works once", async () => {
    const a = await account();
    const client = await registerClient(server);
    const { verifier, challenge } = pkce();
    const code = (await authorize(server, { clientId: client.client_id, cookie: a.cookie, challenge })).code!;
    const grant = await token(server, { grant_type: "authorization_code", code, redirect_uri: REDIRECT, client_id: client.client_id, code_verifier: verifier });
    expect(grant.json.refresh_token, grant.text).toBeTruthy();
    const newEmail = uniqueEmail("taker");
    expect((await server.api("/api/auth/change-email", { cookie: a.cookie, body: { newEmail, currentPassword: PASSWORD } })).status).toBe(200);
    expect((await follow(linkIn(await box.latest(newEmail, /confirm/i)))).status).toBe(200);
    expect(await emailOf(a.cookie)).toBe(newEmail);
    const taker = await signIn(newEmail);
    expect(taker.status).toBe(200);

    const undo = linkIn(await box.latest(a.email, /being changed/i));
    const res = await follow(undo);
    expect(res.status, res.text).toBe(200);
    expect(res.json.status).toBe(true);
    expect(await emailOf(a.cookie)).toBeUndefined();
    expect(await emailOf(cookiesOf(taker.headers))).toBeUndefined();
    expect((await signIn(a.email)).status).toBe(200);
    expect((await signIn(newEmail)).status).toBe(401);
    const refreshed = await token(server, { grant_type: "refresh_token", refresh_token: grant.json.refresh_token, client_id: client.client_id });
    expect(refreshed.status).toBe(400);
    expect(refreshed.json.error).toBe("invalid_grant");
    expect((await follow(undo)).status).toBe(400);
  });

  it("the undo link before confirmation cancels the pending change", async () => {
    const a = await account();
    const newEmail = uniqueEmail("pending");
    expect((await server.api("/api/auth/change-email", { cookie: a.cookie, body: { newEmail, currentPassword: PASSWORD } })).status).toBe(200);
    const confirm = linkIn(await box.latest(newEmail, /confirm/i));
    expect((await follow(linkIn(await box.latest(a.email, /being changed/i)))).status).toBe(200);
    expect((await follow(confirm)).status).toBe(400);
    expect((await signIn(a.email)).status).toBe(200);
    expect((await signIn(newEmail)).status).toBe(401);
  });

  it("answers alike for an address that has an account, and mails it nothing", async () => {
    const taken = await account("owner");
    const a = await account();
    const before = box.count(taken.email);
    const res = await server.api("/api/auth/change-email", { cookie: a.cookie, body: { newEmail: taken.email, currentPassword: PASSWORD } });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({ status: true, message: "Verification email sent", user: { email: a.email } });
    await box.latest(a.email, /being changed/i);
    expect(box.count(taken.email)).toBe(before);
    expect(await emailOf(a.cookie)).toBe(a.email);
  });

  it("refuses made-up link tokens with 400", async () => {
    expect((await server.api("/api/auth/change-email/confirm?token=nope")).status).toBe(400);
    expect((await server.api("/api/auth/change-email/undo?token=nope")).status).toBe(400);
  });
});
