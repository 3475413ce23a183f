import { randomBytes, randomUUID } from "node:crypto";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { addCookies, fillByLabel, submitWith } from "../helpers/browser.js";
import { redeemCode, signUpWithForm, useBrowser, useCallbackServer, useTestServer } from "../helpers/fixtures.js";
import { pkce, registerClient, signUp } from "../helpers/oauth.js";
import { freePort, uniqueEmail } from "../helpers/server.js";

/**
 * Passkeys (WebAuthn) in headless Chromium with a virtual authenticator (the DevTools WebAuthn
 * domain): registered on the account page, then used on the sign-in page, where it resumes a
 * pending OAuth authorization. WebAuthn refuses IP-address origins, so this server's AUTH_URL
 * is http://localhost:<port> (the RP ID is "localhost").
 */
const server = useTestServer(async () => {
  const port = await freePort();
  return { PORT: String(port), AUTH_URL: `http://localhost:${port}` };
});
const browser = useBrowser();
const callback = useCallbackServer();
const signUpThroughPage = (page: Page) => signUpWithForm(server, page, { name: "Passkey Person", email: uniqueEmail("passkey") });

async function passkeysOf(userId: string) {
  return server.db.selectFrom("passkey").select(["id", "name", "credentialID", "counter", "userId"]).where("userId", "=", userId).execute();
}

describe("passkeys in the browser", () => {
  it("registers a passkey on the account page, then signs in with it and resumes the app's authorization", async () => {
    const { page, cdp, authenticatorId } = await browser.pageWithAuthenticator();
    const person = await signUpThroughPage(page);
    expect(new URL(page.url()).pathname).toBe("/");

    // Register: the profile and security page's "Add a passkey" (JavaScript and WebAuthn).
    await page.goto(`${server.url}/account/security`);
    const add = page.locator("#passkey-add");
    await add.waitFor({ state: "visible" });
    await fillByLabel(page, "Name for the new passkey", "Test laptop");
    await Promise.all([page.waitForURL((u) => u.searchParams.get("notice") === "passkey-added"), page.getByRole("button", { name: "Add a passkey", exact: true }).click()]);
    expect(new URL(page.url()).pathname).toBe("/account/security");
    await expect(page.locator("#passkeys").textContent()).resolves.toContain("Test laptop");
    const [stored] = await passkeysOf(person.userId);
    expect(stored).toMatchObject({ name: "Test laptop", userId: person.userId });
    const { credentials } = await cdp.send("WebAuthn.getCredentials", { authenticatorId });
    expect(credentials).toHaveLength(1);
    expect(credentials[0]!.isResidentCredential).toBe(true);
    // The server stored the authenticator's credential id (base64url).
    expect(Buffer.from(credentials[0]!.credentialId, "base64").toString("base64url")).toBe(stored!.credentialID);

    // Rename it with the plain form.
    await page.locator(`#passkey-name-${stored!.id}`).fill("Work laptop");
    await submitWith(page, "Rename Test laptop");
    await expect(page.locator("#passkeys").textContent()).resolves.toContain("Work laptop");

    // Sign out (this device), then an app asks for an authorization.
    await submitWith(page, "Sign out");
    expect(new URL(page.url()).pathname).toBe("/sign-in");
    const client = await registerClient(server, { client_name: "Passkey App", redirect_uris: [callback.redirectUri] });
    const { verifier, challenge } = pkce();
    const state = randomBytes(8).toString("hex");
    const params = new URLSearchParams({ response_type: "code", client_id: client.client_id, redirect_uri: callback.redirectUri, scope: "openid email", state, code_challenge: challenge, code_challenge_method: "S256" });
    await page.goto(`${server.url}/api/auth/oauth2/authorize?${params}`);
    expect(new URL(page.url()).pathname).toBe("/sign-in");

    // Sign in with the passkey: a discoverable credential, no e-mail typed.
    const button = page.getByRole("button", { name: "Sign in with a passkey", exact: true });
    await button.waitFor({ state: "visible" });
    await Promise.all([page.waitForURL((u) => u.pathname === "/consent"), button.click()]);
    await submitWith(page, "Allow");
    const tokens = await redeemCode(server, new URL(page.url()), { redirectUri: callback.redirectUri, clientId: client.client_id, state, verifier });
    expect(tokens.status).toBe(200);
    expect(JSON.parse(Buffer.from(tokens.json.id_token.split(".")[1], "base64url").toString("utf8")).sub).toBe(person.userId);
    // The authenticator's signature counter moved on, and the server kept up.
    const [used] = await passkeysOf(person.userId);
    const after = await cdp.send("WebAuthn.getCredentials", { authenticatorId });
    expect(Number(used!.counter)).toBe(after.credentials[0]!.signCount);

    // Without a pending authorization, a passkey sign-in lands on the account page.
    await page.context().clearCookies();
    await page.goto(`${server.url}/sign-in`);
    await Promise.all([page.waitForURL((u) => u.pathname === "/"), page.getByRole("button", { name: "Sign in with a passkey", exact: true }).click()]);
    await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe("Your account");
  });

  it("a passkey the server does not know signs no one in", async () => {
    const { page } = await browser.pageWithAuthenticator();
    const person = await signUpThroughPage(page);
    await page.goto(`${server.url}/account/security`);
    await page.locator("#passkey-add").waitFor({ state: "visible" });
    await Promise.all([page.waitForURL((u) => u.searchParams.get("notice") === "passkey-added"), page.getByRole("button", { name: "Add a passkey", exact: true }).click()]);
    // The server forgets it; the authenticator still has it.
    await server.db.deleteFrom("passkey").where("userId", "=", person.userId).execute();
    await page.context().clearCookies();
    await page.goto(`${server.url}/sign-in`);
    await page.getByRole("button", { name: "Sign in with a passkey", exact: true }).click();
    await page.locator("#passkey-sign-in [role=alert]").waitFor({ state: "visible" });
    await expect(page.locator("#passkey-sign-in [role=alert]").textContent()).resolves.toMatch(/not accepted/i);
    expect(await page.request.get(`${server.url}/api/auth/get-session`).then((r) => r.json())).toBeNull();
  });

  it("without JavaScript the passkey button stays hidden and the e-mail form remains", async () => {
    const page = await browser.page({ javaScriptEnabled: false });
    await page.goto(`${server.url}/sign-in`);
    expect(await page.locator("#passkey-sign-in").isHidden()).toBe(true);
    expect(await page.getByRole("button", { name: "Sign in", exact: true }).isVisible()).toBe(true);
  });
});

describe("deleting passkeys keeps a way to sign in", () => {
  async function addStoredPasskey(userId: string, name: string) {
    const id = randomUUID();
    await server.db
      .insertInto("passkey")
      .values({ id, name, userId, publicKey: "AAAA", credentialID: randomBytes(16).toString("base64url"), counter: 0, deviceType: "singleDevice", backedUp: false, transports: "internal", createdAt: new Date() })
      .execute();
    return id;
  }

  it("refuses to delete the only passkey of an account with no other way in; with another, deletes", async () => {
    const person = await signUp(server);
    const first = await addStoredPasskey(person.user.id, "Only key");
    // This account loses its password: the passkey is now its last way in.
    await server.db.deleteFrom("account").where("userId", "=", person.user.id).where("providerId", "=", "credential").execute();

    const refused = await server.api("/api/auth/passkey/delete-passkey", { cookie: person.cookie, body: { id: first } });
    expect(refused.status).toBe(400);
    expect(refused.json.code).toBe("LAST_SIGN_IN_METHOD");
    expect(await passkeysOf(person.user.id)).toHaveLength(1);

    // Someone else cannot delete it at all.
    const stranger = await signUp(server);
    const foreign = await server.api("/api/auth/passkey/delete-passkey", { cookie: stranger.cookie, body: { id: first } });
    expect(foreign.status).toBeGreaterThanOrEqual(400);
    expect(await passkeysOf(person.user.id)).toHaveLength(1);

    const second = await addStoredPasskey(person.user.id, "Spare key");
    const ok = await server.api("/api/auth/passkey/delete-passkey", { cookie: person.cookie, body: { id: first } });
    expect(ok.status).toBe(200);
    expect((await passkeysOf(person.user.id)).map((p) => p.id)).toEqual([second]);
  });

  it("the account page says why the last passkey stays", async () => {
    const person = await signUp(server);
    const id = await addStoredPasskey(person.user.id, "Last key");
    await server.db.deleteFrom("account").where("userId", "=", person.user.id).where("providerId", "=", "credential").execute();
    const context = await browser.context({ javaScriptEnabled: false });
    await addCookies(context, person.cookie, server.url);
    const page = await context.newPage();
    await page.goto(`${server.url}/account/security`);
    await submitWith(page, "Delete Last key");
    expect(new URL(page.url()).searchParams.get("error")).toBe("LAST_SIGN_IN_METHOD");
    await expect(page.getByRole("alert").textContent()).resolves.toMatch(/last way to sign in/i);
    expect((await passkeysOf(person.user.id)).map((p) => p.id)).toEqual([id]);
  });
});
