import { randomUUID } from "node:crypto";
import type { Page } from "playwright-core";
import { afterAll, describe, expect, it } from "vitest";
import { newIdentity, signRequest } from "../helpers/bap.js";
import { fillByLabel, submitWith } from "../helpers/browser.js";
import { signUpWithForm, useBrowser, useTestServer } from "../helpers/fixtures.js";
import { linkIn, mailbox } from "../helpers/mailbox.js";
import { authorize, pkce, REDIRECT, registerClient, token } from "../helpers/oauth.js";
import { cookiesOf, freePort, uniqueEmail } from "../helpers/server.js";
import { secretOf, totp } from "../helpers/totp.js";
import { providerEnv, startUpstreamOidc, type UpstreamOidc } from "../helpers/upstream-oidc.js";

/**
 * The account pages (the overview at /account, and / when signed in; profile and security,
 * identities, apps, organizations) in headless Chromium, for a person who has something in
 * every section: two sessions, a linked social account (linked from the page, through a real
 * upstream OpenID Provider), a passkey (virtual authenticator), two-factor on, two BAP
 * identities, an authorized app and an organization with a pending invitation. Then the pages'
 * own forms: revoke the app, sign out the other session, and the rest, each back on its page.
 */
const PROVIDER = "upstream";
const PROVIDER_NAME = "Upstream ID";
const FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0";

const box = mailbox();
const browser = useBrowser();
let upstream: UpstreamOidc;
const server = useTestServer(async () => {
  const port = await freePort();
  // localhost, not 127.0.0.1: WebAuthn needs a domain name for its RP ID.
  const url = `http://localhost:${port}`;
  upstream = await startUpstreamOidc({ clients: [{ clientId: "idp-account-page", redirectUris: [`${url}/api/auth/callback/${PROVIDER}`] }] });
  return { PORT: String(port), AUTH_URL: url, ...providerEnv(1, upstream, { id: PROVIDER, name: PROVIDER_NAME }) };
}, { mailer: box.mailer });
afterAll(async () => {
  await upstream?.close();
});

/** Another session of the same person, from "another device" (a Firefox user agent). */
async function otherSession(email: string, password: string, totpSecret?: Buffer) {
  let res = await server.api("/api/auth/sign-in/email", { body: { email, password }, headers: { "user-agent": FIREFOX } });
  expect(res.status).toBe(200);
  if (res.json.twoFactorRedirect && totpSecret) {
    res = await server.api("/api/auth/two-factor/verify-totp", { cookie: cookiesOf(res.headers), body: { code: totp(totpSecret) }, headers: { "user-agent": FIREFOX } });
    expect(res.status).toBe(200);
  }
  const cookie = cookiesOf(res.headers);
  const row = await server.db.selectFrom("session").select(["id"]).where("token", "=", res.json.token).executeTakeFirstOrThrow();
  return { cookie, id: row.id as string };
}

const sessionOf = async (cookie: string) => (await server.api("/api/auth/get-session", { cookie })).json;
const section = (page: Page, id: string) => page.locator(`section#${id}`);
const here = (page: Page) => new URL(page.url()).pathname;

/** Every visible field has a label; every section is a labelled region. */
async function labelled(page: Page, regions: number) {
  const unlabelled = await page.$$eval("input:not([type=hidden]), select", (els) => els.filter((el) => !(el as HTMLInputElement).labels?.length && el.getClientRects().length).map((el) => el.id || (el as HTMLInputElement).name));
  expect(unlabelled).toEqual([]);
  expect(await page.getByRole("region").count()).toBe(regions);
}

describe("account page", () => {
  it("shows every section with the person's data on its page, and its forms revoke an app and sign out another session", async () => {
    const { page } = await browser.pageWithAuthenticator();

    // Sign up through the page: it lands on /, which is the account overview for a signed-in person.
    const { email, password, userId } = await signUpWithForm(server, page, { name: "Account Person", email: uniqueEmail("account") });
    expect(new URL(page.url()).pathname).toBe("/");
    await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe("Your account");

    // Data from elsewhere: another session, BAP identities, an app, two-factor, an organization.
    const other = await otherSession(email, password);
    const [main, alt] = [newIdentity(), newIdentity()];
    for (const [id, name] of [[main, "Main identity"], [alt, "Alt identity"]] as const) {
      const body = JSON.stringify({ bapId: id.bapId, name });
      const res = await server.api("/api/user/bap-ids", { cookie: other.cookie, body, headers: { "x-auth-token": signRequest(id.key, "/api/user/bap-ids", body) } });
      expect(res.status).toBe(201);
    }
    const client = await registerClient(server, { client_name: "Notes App", client_uri: "https://notes.example" });
    const { verifier, challenge } = pkce();
    const granted = await authorize(server, { clientId: client.client_id, cookie: other.cookie, challenge, scope: "openid email offline_access" });
    const tokens = await token(server, { grant_type: "authorization_code", code: granted.code!, redirect_uri: REDIRECT, client_id: client.client_id, code_verifier: verifier });
    expect(tokens.status).toBe(200);
    const org = await server.api("/api/auth/organization/create", { cookie: other.cookie, body: { name: "Account Org", slug: `account-org-${Date.now()}` } });
    expect(org.status).toBe(200);
    const invitee = uniqueEmail("invitee");
    expect((await server.api("/api/auth/organization/invite-member", { cookie: other.cookie, body: { organizationId: org.json.id, email: invitee, role: "member" } })).status).toBe(200);
    // Two-factor from a third session (turning it on replaces that session, so keep it apart).
    const third = await otherSession(email, password);
    const enabled = await server.api("/api/auth/two-factor/enable", { cookie: third.cookie, body: { password } });
    const totpSecret = secretOf(enabled.json.totpURI);
    expect((await server.api("/api/auth/two-factor/verify-totp", { cookie: third.cookie, body: { code: totp(totpSecret) } })).status).toBe(200);

    // A passkey, from the profile and security page.
    await page.goto(`${server.url}/account/security`);
    await page.locator("#passkey-add").waitFor({ state: "visible" });
    await fillByLabel(page, "Name for the new passkey", "Desk key");
    await Promise.all([page.waitForURL((u) => u.searchParams.get("notice") === "passkey-added"), page.getByRole("button", { name: "Add a passkey", exact: true }).click()]);

    // A social account, linked from the page through the upstream provider (same e-mail).
    const sub = randomUUID();
    upstream.addUser({ sub, email, name: "Account Person" });
    await submitWith(page, `Link ${PROVIDER_NAME}`);
    expect(new URL(page.url()).origin).toBe(upstream.issuer);
    await page.locator('input[name="login"]').fill(sub);
    await page.locator('input[name="password"]').fill("any password");
    await submitWith(page, "Sign-in");
    if (new URL(page.url()).origin === upstream.issuer) await submitWith(page, "Continue");
    expect(here(page)).toBe("/account/security");
    expect(new URL(page.url()).searchParams.get("notice")).toBe("account-linked");

    // Every section shows its data, on its page.
    await expect(page.getByRole("status").first().textContent()).resolves.toMatch(/account was linked/);
    await expect(page.getByLabel("Name", { exact: true }).inputValue()).resolves.toBe("Account Person");
    await expect(section(page, "profile").textContent()).resolves.toContain(email);
    const sessionRows = section(page, "sessions").locator("tbody tr");
    expect(await sessionRows.count()).toBe(3);
    await expect(section(page, "sessions").textContent()).resolves.toContain("(this device)");
    await expect(section(page, "sessions").locator(`tr[data-session-id="${other.id}"]`).textContent()).resolves.toContain("Firefox on Linux");
    await expect(section(page, "accounts").textContent()).resolves.toContain(PROVIDER_NAME);
    await expect(section(page, "accounts").textContent()).resolves.toContain("You can sign in with your e-mail and password.");
    await expect(section(page, "passkeys").textContent()).resolves.toContain("Desk key");
    await expect(section(page, "two-factor").textContent()).resolves.toContain("On.");
    await labelled(page, 5);
    await page.goto(`${server.url}/account/identities`);
    const identities = section(page, "identities");
    await expect(identities.locator(`tr[data-bap-id="${main.bapId}"]`).textContent()).resolves.toMatch(/Main identity.*Primary/);
    await expect(identities.locator(`tr[data-bap-id="${alt.bapId}"]`).textContent()).resolves.toContain("Alt identity");
    await labelled(page, 3);
    await page.goto(`${server.url}/account/organizations`);
    await expect(section(page, "organizations").textContent()).resolves.toMatch(/Account Org.*you are owner/);
    await expect(section(page, "organizations").textContent()).resolves.toContain(`${invitee} as member (pending`);
    await labelled(page, 1);
    await page.goto(`${server.url}/account/apps`);
    const app = section(page, "apps").locator(`tr[data-client-id="${client.client_id}"]`);
    await expect(app.textContent()).resolves.toContain("Notes App");
    await expect(app.textContent()).resolves.toMatch(/See your e-mail address/);
    await expect(section(page, "agents").getByRole("heading", { level: 2 }).textContent()).resolves.toBe("Agents");
    await expect(section(page, "approvals").textContent()).resolves.toContain("No application is waiting for your approval.");
    await labelled(page, 3);

    // Revoke the app from the page: consent and tokens go; the answer is the same page.
    await submitWith(page, "Revoke Notes App");
    expect(here(page)).toBe("/account/apps");
    expect(new URL(page.url()).searchParams.get("notice")).toBe("app-revoked");
    expect(await section(page, "apps").locator(`tr[data-client-id="${client.client_id}"]`).count()).toBe(0);
    expect((await server.api("/api/authorized-apps", { cookie: other.cookie })).json.apps).toEqual([]);
    const refresh = await token(server, { grant_type: "refresh_token", refresh_token: tokens.json.refresh_token, client_id: client.client_id });
    expect(refresh.status).toBe(400);

    // Sign out the other session from the page: its cookie stops working, this one does not.
    await page.goto(`${server.url}/account/security`);
    expect(await sessionOf(other.cookie)).not.toBeNull();
    const row = section(page, "sessions").locator(`tr[data-session-id="${other.id}"]`);
    await Promise.all([page.waitForNavigation(), row.getByRole("button").click()]);
    expect(new URL(page.url()).searchParams.get("notice")).toBe("session-revoked");
    expect(await sessionOf(other.cookie)).toBeNull();
    expect(await section(page, "sessions").locator("tbody tr").count()).toBe(2);

    // "Sign out all other sessions" ends the rest.
    const fourth = await otherSession(email, password, totpSecret);
    await page.reload();
    await submitWith(page, "Sign out all other sessions");
    expect(new URL(page.url()).searchParams.get("notice")).toBe("other-sessions-revoked");
    expect(await sessionOf(fourth.cookie)).toBeNull();
    expect(await section(page, "sessions").locator("tbody tr").count()).toBe(1);

    // Make the other identity primary: the default bap_id and the account's pubkey follow.
    await page.goto(`${server.url}/account/identities`);
    await submitWith(page, "Make primary: Alt identity");
    expect(here(page)).toBe("/account/identities");
    expect(new URL(page.url()).searchParams.get("notice")).toBe("primary-identity-set");
    await expect(identities.locator(`tr[data-bap-id="${alt.bapId}"]`).textContent()).resolves.toContain("Primary");
    const user = await server.db.selectFrom("user").select(["pubkey"]).where("id", "=", userId).executeTakeFirstOrThrow();
    expect(user.pubkey).toBe(alt.pubkey);

    // Unlink the social account: the password remains a way in.
    await page.goto(`${server.url}/account/security`);
    await submitWith(page, `Unlink ${PROVIDER_NAME}`);
    expect(new URL(page.url()).searchParams.get("notice")).toBe("account-unlinked");
    await expect(section(page, "accounts").textContent()).resolves.toContain("No social account is linked.");

    // Name and e-mail.
    await fillByLabel(page, "Name", "Renamed Person");
    await submitWith(page, "Save name");
    expect(new URL(page.url()).searchParams.get("notice")).toBe("name-changed");
    await expect(page.getByLabel("Name", { exact: true }).inputValue()).resolves.toBe("Renamed Person");
    const newEmail = uniqueEmail("changed");
    await fillByLabel(page, "New e-mail address", newEmail);
    await fillByLabel(page, "Your password", password);
    await submitWith(page, "Change e-mail");
    expect(new URL(page.url()).searchParams.get("notice")).toBe("email-verification-sent");
    // The change happens when the link mailed to the new address is followed (plugins/account-email).
    await page.goto(linkIn(await box.latest(newEmail, /confirm/i)).href);
    expect(here(page)).toBe("/account/security");
    expect(new URL(page.url()).searchParams.get("notice")).toBe("email-changed");
    await expect(section(page, "profile").textContent()).resolves.toContain(newEmail);

    // Sign out this device: back to sign-in, and / no longer shows the account.
    await submitWith(page, "Sign out");
    expect(new URL(page.url()).pathname).toBe("/sign-in");
    await page.goto(`${server.url}/`);
    expect(new URL(page.url()).pathname).toBe("/sign-in");
  });

  it("needs a session: /account sends the browser to sign in and back", async () => {
    const res = await fetch(`${server.url}/account`, { redirect: "manual" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/sign-in?return_to=%2Faccount");
    expect((await fetch(`${server.url}/`, { redirect: "manual" })).headers.get("location")).toBe("/sign-in");
  });

  it("refuses account forms posted from another site, and ignores unknown notice and error codes", async () => {
    const email = uniqueEmail("csrf");
    const signUpRes = await server.api("/api/auth/sign-up/email", { body: { name: "Csrf", email, password: "correct horse battery staple" } });
    const cookie = cookiesOf(signUpRes.headers);
    const other = await otherSession(email, "correct horse battery staple");
    const res = await fetch(`${server.url}/account/sessions/revoke-others`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie, origin: "https://evil.example", "sec-fetch-site": "cross-site" },
      body: "",
      redirect: "manual",
    });
    expect(res.status).toBe(403);
    expect(await sessionOf(other.cookie)).not.toBeNull();

    const page = await fetch(`${server.url}/account?notice=<script>alert(1)</script>&error=${encodeURIComponent("<b>owned</b>")}`, { headers: { cookie } });
    expect(page.status).toBe(200);
    expect(page.headers.get("cache-control")).toBe("no-store");
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
    const html = await page.text();
    expect(html).not.toContain("<script>alert(1)</script>");
    expect(html).not.toContain("owned");
  });
});
