import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { fillByLabel, submitWith } from "../helpers/browser.js";
import { redeemCode, signInThroughPage, useBrowser, useCallbackServer, useTestServer } from "../helpers/fixtures.js";
import { authorize, pkce, REDIRECT, registerClient, signUp } from "../helpers/oauth.js";
import { cookiesOf } from "../helpers/server.js";
import { base32Decode, secretOf, totp, wrongCode } from "../helpers/totp.js";

/**
 * TOTP two-factor (RFC 6238) through the pages, with JavaScript off: turned on from the account
 * page, then a password sign-in continues to the code step, which refuses a wrong code, accepts
 * a code computed here from the secret (or a backup code, once), and resumes a pending OAuth
 * authorization.
 */
const server = useTestServer();
const browser = useBrowser();
const callback = useCallbackServer();
/** JavaScript off: every step must work with plain forms. */
const freshPage = () => browser.page({ javaScriptEnabled: false });

/** The backup-code form sits in a <details>: open it unless the page already has it open. */
async function openBackupForm(page: Page) {
  const details = page.locator("details");
  if (!(await details.evaluate((d) => (d as HTMLDetailsElement).open))) await page.getByText("Use a backup code instead").click();
}

/** Turns two-factor on through the account page; returns the secret (read off the setup page) and the backup codes shown. */
async function enableThroughAccountPage(page: Page, password: string) {
  await page.goto(`${server.url}/account/security`);
  const section = page.locator("#two-factor");
  await expect(section.textContent()).resolves.toContain("Off.");
  await section.getByLabel("Password", { exact: true }).fill(password);
  await submitWith(page, "Set up two-factor");

  expect(new URL(page.url()).pathname).toBe("/account/two-factor/enable");
  await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe("Set up two-factor sign-in");
  expect(await page.locator("svg.qr").count()).toBe(1);
  const uri = await page.getByRole("link", { name: "open it in your authenticator app" }).getAttribute("href");
  expect(uri).toMatch(/^otpauth:\/\/totp\//);
  const typed = (await page.locator("[data-role=totp-secret]").textContent())!;
  // The key a person would type is the URI's secret.
  expect(base32Decode(typed).equals(secretOf(uri!))).toBe(true);
  const secret = secretOf(uri!);

  // A wrong code does not turn it on.
  await fillByLabel(page, "Code from the app", wrongCode(secret));
  await submitWith(page, "Turn on two-factor");
  await expect(page.getByRole("alert").textContent()).resolves.toMatch(/not right/i);

  await fillByLabel(page, "Code from the app", totp(secret));
  await submitWith(page, "Turn on two-factor");
  await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe("Two-factor sign-in is on");
  const backupCodes = (await page.locator("ul.codes code").allTextContents()).map((c) => c.trim());
  expect(backupCodes).toHaveLength(10);
  expect(new Set(backupCodes).size).toBe(10);
  return { secret, backupCodes };
}

describe("RFC 6238 helper", () => {
  it("matches the RFC's SHA-1 test vector", () => {
    // RFC 6238 Appendix B: T = 59 s, secret "12345678901234567890", 8 digits -> 94287082.
    expect(totp(Buffer.from("12345678901234567890"), 59_000, 30, 8)).toBe("94287082");
  });
});

describe("two-factor sign-in through the pages", () => {
  it("turns on from the account page; a password sign-in then asks for a code, refuses a wrong one, and resumes the app's authorization", async () => {
    const person = await signUp(server);
    const setup = await freshPage();
    await setup.goto(`${server.url}/sign-in`);
    await signInThroughPage(setup, person);
    expect(new URL(setup.url()).pathname).toBe("/");
    const { secret } = await enableThroughAccountPage(setup, person.password);
    const row = await server.db.selectFrom("user").select(["twoFactorEnabled"]).where("id", "=", person.user.id).executeTakeFirstOrThrow();
    expect(Boolean(row.twoFactorEnabled)).toBe(true);
    // The setup browser's session survived the switch (better-auth replaced it and the page passed the cookie on).
    await setup.goto(`${server.url}/account/security`);
    await expect(setup.locator("#two-factor").textContent()).resolves.toContain("On.");

    // An app sends a signed-out browser to authorize.
    const client = await registerClient(server, { client_name: "Two-Factor App", redirect_uris: [callback.redirectUri] });
    const { verifier, challenge } = pkce();
    const state = randomBytes(8).toString("hex");
    const params = new URLSearchParams({ response_type: "code", client_id: client.client_id, redirect_uri: callback.redirectUri, scope: "openid email", state, code_challenge: challenge, code_challenge_method: "S256" });
    const page = await freshPage();
    await page.goto(`${server.url}/api/auth/oauth2/authorize?${params}`);
    await signInThroughPage(page, person);

    // No session yet: the code step, carrying the signed authorization request.
    const step = new URL(page.url());
    expect(step.pathname).toBe("/sign-in/two-factor");
    expect(step.searchParams.get("sig")).toBeTruthy();
    expect(step.searchParams.get("client_id")).toBe(client.client_id);
    expect((await page.request.get(`${server.url}/api/auth/get-session`).then((r) => r.json())) ?? null).toBeNull();

    await fillByLabel(page, "Code from your authenticator app", wrongCode(secret));
    await submitWith(page, "Verify");
    expect(new URL(page.url()).pathname).toBe("/sign-in/two-factor");
    await expect(page.getByRole("alert").textContent()).resolves.toMatch(/not right/i);
    expect(await page.request.get(`${server.url}/api/auth/get-session`).then((r) => r.json())).toBeNull();

    await fillByLabel(page, "Code from your authenticator app", totp(secret));
    await submitWith(page, "Verify");
    expect(new URL(page.url()).pathname).toBe("/consent");
    await submitWith(page, "Allow");
    const tokens = await redeemCode(server, new URL(page.url()), { redirectUri: callback.redirectUri, clientId: client.client_id, state, verifier });
    expect(tokens.status).toBe(200);
    const claims = JSON.parse(Buffer.from(tokens.json.id_token.split(".")[1], "base64url").toString("utf8"));
    expect(claims.sub).toBe(person.user.id);
  });

  it("accepts a backup code once, and new backup codes replace the old ones", async () => {
    const person = await signUp(server);
    const setup = await freshPage();
    await setup.goto(`${server.url}/sign-in`);
    await signInThroughPage(setup, person);
    const { backupCodes } = await enableThroughAccountPage(setup, person.password);

    const page = await freshPage();
    await page.goto(`${server.url}/sign-in`);
    await signInThroughPage(page, person);
    expect(new URL(page.url()).pathname).toBe("/sign-in/two-factor");
    await openBackupForm(page);
    await fillByLabel(page, "Backup code", backupCodes[0]!);
    await submitWith(page, "Use backup code");
    // Signed in: no pending authorization, so the account page.
    expect(new URL(page.url()).pathname).toBe("/");
    await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe("Your account");

    const again = await freshPage();
    await again.goto(`${server.url}/sign-in`);
    await signInThroughPage(again, person);
    await openBackupForm(again);
    await fillByLabel(again, "Backup code", backupCodes[0]!);
    await submitWith(again, "Use backup code");
    expect(new URL(again.url()).pathname).toBe("/sign-in/two-factor");
    await expect(again.getByRole("alert").textContent()).resolves.toMatch(/not right/i);

    // New codes from the account page (password required); an unused old one stops working.
    await setup.goto(`${server.url}/account/security`);
    await setup.locator("#two-factor").getByLabel("Password", { exact: true }).first().fill(person.password);
    await submitWith(setup, "Make new backup codes");
    await expect(setup.getByRole("heading", { level: 1 }).textContent()).resolves.toBe("Your new backup codes");
    const fresh = (await setup.locator("ul.codes code").allTextContents()).map((c) => c.trim());
    expect(fresh).toHaveLength(10);
    expect(fresh).not.toContain(backupCodes[1]);
    await openBackupForm(again);
    await fillByLabel(again, "Backup code", backupCodes[1]!);
    await submitWith(again, "Use backup code");
    await expect(again.getByRole("alert").textContent()).resolves.toMatch(/not right/i);
    await openBackupForm(again);
    await fillByLabel(again, "Backup code", fresh[0]!);
    await submitWith(again, "Use backup code");
    expect(new URL(again.url()).pathname).toBe("/");
  });

  it("turning two-factor off needs the password; afterwards a password sign-in needs no code", async () => {
    const person = await signUp(server);
    const page = await freshPage();
    await page.goto(`${server.url}/sign-in`);
    await signInThroughPage(page, person);
    await enableThroughAccountPage(page, person.password);

    await page.goto(`${server.url}/account/security`);
    await page.locator("#tf-disable-password").fill("not my password");
    await submitWith(page, "Turn off two-factor");
    expect(new URL(page.url()).searchParams.get("error")).toBe("INVALID_PASSWORD");
    await expect(page.getByRole("alert").textContent()).resolves.toMatch(/password is not right/i);
    await page.locator("#tf-disable-password").fill(person.password);
    await submitWith(page, "Turn off two-factor");
    await expect(page.getByRole("status").first().textContent()).resolves.toMatch(/two-factor sign-in is off/i);

    const later = await freshPage();
    await later.goto(`${server.url}/sign-in`);
    await signInThroughPage(later, person);
    expect(new URL(later.url()).pathname).toBe("/");
  });
});

/**
 * Authorization codes stored for one client: verification values live in the database, or in
 * Redis only when the server has secondary storage (TEST_REDIS_URL), so both are counted.
 */
async function storedCodes(clientId: string): Promise<number> {
  const rows = await server.db.selectFrom("verification").select(["value"]).where("value", "like", '%"authorization_code"%').execute();
  let count = rows.filter((r) => String(r.value).includes(clientId)).length;
  if (process.env.TEST_REDIS_URL) {
    const redis = new Redis(process.env.TEST_REDIS_URL);
    try {
      let cursor = "0";
      do {
        const [next, keys] = await redis.scan(cursor, "MATCH", "idp:verification:*", "COUNT", 500);
        cursor = next;
        const values = keys.length ? await redis.mget(...keys) : [];
        count += values.filter((v) => v?.includes("authorization_code") && v.includes(clientId)).length;
      } while (cursor !== "0");
    } finally {
      redis.disconnect();
    }
  }
  return count;
}

describe("two-factor and pending authorizations (API)", () => {
  it("mints no authorization code before the second factor, even with consent on record", async () => {
    const person = await signUp(server);
    const enabled = await server.api("/api/auth/two-factor/enable", { cookie: person.cookie, body: { password: person.password } });
    expect(enabled.status).toBe(200);
    const secret = secretOf(enabled.json.totpURI);
    const verified = await server.api("/api/auth/two-factor/verify-totp", { cookie: person.cookie, body: { code: totp(secret) } });
    expect(verified.status).toBe(200);
    const cookie = cookiesOf(verified.headers);

    // Consent is remembered, so a resumed authorization would go straight to a code.
    const client = await registerClient(server);
    await authorize(server, { clientId: client.client_id, cookie, scope: "openid" });
    const { challenge } = pkce();
    const start = await server.api(`/api/auth/oauth2/authorize?${new URLSearchParams({ response_type: "code", client_id: client.client_id, redirect_uri: REDIRECT, scope: "openid", state: "s1", code_challenge: challenge, code_challenge_method: "S256" })}`);
    const signInUrl = new URL(start.headers.get("location") ?? start.json.url, server.url);
    const oauthQuery = signInUrl.search.slice(1);

    const before = await storedCodes(client.client_id);
    expect(before).toBe(1);
    const signIn = await server.api("/api/auth/sign-in/email", { body: { email: person.email, password: person.password, oauth_query: oauthQuery } });
    expect(signIn.status).toBe(200);
    expect(signIn.json).toMatchObject({ twoFactorRedirect: true });
    expect(signIn.headers.getSetCookie().some((c) => /session_token=[^;]+;/.test(c) && !/Max-Age=0/i.test(c))).toBe(false);
    expect(await storedCodes(client.client_id)).toBe(before);

    // The second factor resumes the authorization: straight back to the client with a code.
    const second = await server.api("/api/auth/two-factor/verify-totp", { cookie: cookiesOf(signIn.headers), body: { code: totp(secret), oauth_query: oauthQuery } });
    expect(second.status).toBe(200);
    const next = new URL(second.json.url);
    expect(`${next.origin}${next.pathname}`).toBe(REDIRECT);
    expect(next.searchParams.get("code")).toBeTruthy();
    expect(next.searchParams.get("state")).toBe("s1");
  });

  it("a code-step form from another site is refused", async () => {
    const res = await fetch(`${server.url}/sign-in/two-factor`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: "https://evil.example", "sec-fetch-site": "cross-site" },
      body: "method=totp&code=123456",
      redirect: "manual",
    });
    expect(res.status).toBe(403);
    expect(res.headers.getSetCookie()).toEqual([]);
  });
});
