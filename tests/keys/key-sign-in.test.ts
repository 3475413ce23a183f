import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PrivateKey } from "@bsv/sdk";
import { getAuthToken, parseAuthToken } from "bitcoin-auth";
import { decryptBackup, encryptBackup } from "bitcoin-backup";
import { BAP, bapIdFromPubkey } from "bsv-bap";
import { createRemoteJWKSet, jwtVerify } from "jose";
import type { Page, Request } from "playwright-core";
import { describe, expect, it } from "vitest";
import { addCookies, fillByLabel, submitWith } from "../helpers/browser.js";
import { redeemCode, useBrowser, useCallbackServer, useTempDirs, useTestServer } from "../helpers/fixtures.js";
import { authorizationRequest as authRequest, registerClient, signUp } from "../helpers/oauth.js";
import { cookiesOf } from "../helpers/server.js";
import { secretOf, totp } from "../helpers/totp.js";

const SIGN_IN = "/api/auth/sign-in/sigma";
const SIGN_UP = "/api/auth/sign-up/sigma";
const SCOPE = "openid profile";

const server = useTestServer();
const browser = useBrowser();
const callback = useCallbackServer();
/** Where the backup files of the tests are written. */
const tempDir = useTempDirs("key-sign-in-");

// --- identities and backups -------------------------------------------------------------

interface Identity {
  key: PrivateKey;
  pubkey: string;
  bapId: string;
}

function identityOf(key: PrivateKey): Identity {
  const pubkey = key.toPublicKey().toString();
  return { key, pubkey, bapId: bapIdFromPubkey(pubkey) };
}
const freshIdentity = () => identityOf(PrivateKey.fromRandom());

/** POST /sign-up/sigma with two proofs from the member key (as tests/keys/key-sign-in-api.test.ts does). */
async function enrol(id: Identity) {
  const body = JSON.stringify({ bapId: id.bapId, intent: "sign-up" });
  const sign = () => getAuthToken({ privateKeyWif: id.key.toWif(), requestPath: SIGN_UP, body });
  const res = await server.api(SIGN_UP, { body, headers: { "x-auth-token": sign(), "x-sigma-enrollment-proof": sign() } });
  expect(res.status, res.text).toBe(200);
  return { userId: res.json.user.id as string, cookie: cookiesOf(res.headers) };
}

const password = () => `backup pass ${randomBytes(9).toString("base64url")}`;

/** An encrypted bitcoin-backup file, as the person keeps it on their device. */
async function backupFile(payload: Record<string, unknown>, pass: string): Promise<string> {
  const path = join(tempDir(), `${randomBytes(6).toString("hex")}.txt`);
  writeFileSync(path, await encryptBackup(payload as never, pass));
  return path;
}

// --- the browser ------------------------------------------------------------------------

interface Recorded {
  method: string;
  url: string;
  headers: Record<string, string>;
  postData: string;
}

/** A fresh browser profile whose every request (from any page or worker in it) is recorded. */
async function recordedPage(options: { javaScriptEnabled?: boolean } = {}) {
  const context = await browser.context(options);
  const pending: Promise<Recorded>[] = [];
  const record = async (req: Request): Promise<Recorded> => ({
    method: req.method(),
    url: req.url(),
    headers: await req.allHeaders().catch(() => req.headers()),
    postData: req.postData() ?? "",
  });
  context.on("request", (req) => pending.push(record(req)));
  const page = await context.newPage();
  return { context, page, requests: () => Promise.all(pending) };
}

/** Every way a secret could be written into a request: raw, URL-encoded, base64, hex. */
function encodings(secret: string): string[] {
  const bytes = Buffer.from(secret, "utf8");
  return [...new Set([secret, encodeURIComponent(secret), bytes.toString("base64"), bytes.toString("base64url"), bytes.toString("hex"), bytes.toString("hex").toUpperCase()])];
}

/** The (secret, request) pairs where a secret shows up anywhere in a request. */
function leaks(requests: Recorded[], secrets: Record<string, string>): string[] {
  const found: string[] = [];
  for (const req of requests) {
    const seen = [req.method, req.url, JSON.stringify(req.headers), req.postData].join("\n");
    for (const [name, secret] of Object.entries(secrets)) {
      if (encodings(secret).some((form) => seen.includes(form))) found.push(`${name} in ${req.method} ${req.url}`);
    }
  }
  return found;
}

const signInRequests = (requests: Recorded[]) => requests.filter((r) => new URL(r.url).pathname === SIGN_IN);

async function waitForKeyForm(page: Page) {
  await page.locator("#key-sign-in").waitFor({ state: "visible" });
}

/** Picks the file, types the password and presses the key sign-in button. */
async function keySignIn(page: Page, file: string, pass: string) {
  await waitForKeyForm(page);
  await page.getByLabel("Backup file", { exact: true }).setInputFiles(file);
  await page.getByLabel("Backup password", { exact: true }).fill(pass);
  await page.getByRole("button", { name: "Sign in with your identity", exact: true }).click();
}

async function alertText(page: Page): Promise<string> {
  const alert = page.locator("#key-sign-in-error");
  await alert.waitFor({ state: "visible" });
  return (await alert.textContent()) ?? "";
}

// --- OAuth ------------------------------------------------------------------------------

/** A native app (registerClient's defaults: public, PKCE) that redirects to our callback server. */
const publicClient = (name: string) => registerClient(server, { client_name: name, redirect_uris: [callback.redirectUri] });

const authorizationRequest = (clientId: string, extra: Record<string, string> = {}) => authRequest(server, clientId, { redirectUri: callback.redirectUri, scope: SCOPE, extra });

/** Exchanges the code the browser brought back and verifies the ID token properly. */
async function idTokenFor(clientId: string, request: ReturnType<typeof authorizationRequest>, back: URL) {
  expect(back.searchParams.get("error")).toBeNull();
  const tokens = await redeemCode(server, back, { redirectUri: callback.redirectUri, clientId, state: request.state, verifier: request.verifier });
  expect(tokens.status, tokens.text).toBe(200);
  const { payload } = await jwtVerify(tokens.json.id_token, createRemoteJWKSet(new URL(`${server.url}/api/auth/jwks`)), { issuer: server.url, audience: clientId });
  expect(payload.nonce).toBe(request.nonce);
  return payload;
}

// --- tests ------------------------------------------------------------------------------

describe("key sign-in page", () => {
  it("signs in with a member backup file, continues through consent to the app, and nothing secret leaves the page", async () => {
    const id = freshIdentity();
    const { userId } = await enrol(id);
    const pass = password();
    const plaintext = { wif: id.key.toWif(), id: id.bapId };
    const file = await backupFile(plaintext, pass);
    const client = await publicClient("Key Sign-In App");
    const request = authorizationRequest(client.client_id);
    const { page, requests } = await recordedPage();

    await page.goto(request.url);
    expect(new URL(page.url()).pathname).toBe("/sign-in");
    await keySignIn(page, file, pass);
    await page.waitForURL((u) => u.pathname === "/consent");
    await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toContain("Key Sign-In App");
    await submitWith(page, "Allow");

    const claims = await idTokenFor(client.client_id, request, new URL(page.url()));
    expect(claims.sub).toBe(userId);
    expect(claims.bap_id).toBe(id.bapId);

    const all = await requests();
    // Nothing secret in any request: not the password, the WIF, the key, or the decrypted backup.
    const secrets = {
      password: pass,
      wif: id.key.toWif(),
      "private key hex": id.key.toHex(),
      // What decryptBackup hands the page: the payload plus bitcoin-backup's createdAt.
      "backup plaintext": JSON.stringify(await decryptBackup(readFileSync(file, "utf8"), pass)),
    };
    expect(leaks(all, secrets)).toEqual([]);
    // (The detector does see a secret where there is one, in any of its encodings.)
    expect(leaks([{ method: "POST", url: server.url, headers: {}, postData: `x=${encodeURIComponent(pass)}` }], { password: pass })).toHaveLength(1);
    // Only our origin and the app's redirect URI were contacted.
    const origins = new Set(all.map((r) => new URL(r.url).origin));
    expect([...origins].sort()).toEqual([server.url, new URL(callback.redirectUri).origin].sort());

    // Exactly one sign-in request: the compact {bapId} body with a token by the member key.
    const [signIn, ...more] = signInRequests(all);
    expect(more).toEqual([]);
    expect(signIn!.method).toBe("POST");
    expect(signIn!.postData).toBe(JSON.stringify({ bapId: id.bapId }));
    const parsed = parseAuthToken(signIn!.headers["x-auth-token"] ?? "");
    // The host-bound form: this server's absolute URL, so the token is no good anywhere else.
    expect(parsed).toMatchObject({ pubkey: id.pubkey, scheme: "brc77", requestPath: server.url + SIGN_IN });

    // The flow resumed with the signed request only (no key material) on /oauth2/continue.
    const resumed = all.filter((r) => new URL(r.url).pathname === "/api/auth/oauth2/continue");
    expect(resumed).toHaveLength(1);
    expect(Object.keys(JSON.parse(resumed[0]!.postData)).sort()).toEqual(["oauth_query", "postLogin"]);
  });

  it("an account with two-factor on goes on to the code step, then through consent to the app", async () => {
    const id = freshIdentity();
    const person = await signUp(server);
    const body = JSON.stringify({ bapId: id.bapId });
    const registered = await server.api("/api/user/bap-ids", { cookie: person.cookie, body, headers: { "x-auth-token": getAuthToken({ privateKeyWif: id.key.toWif(), requestPath: "/api/user/bap-ids", body }) } });
    expect(registered.status, registered.text).toBe(201);
    const enabled = await server.api("/api/auth/two-factor/enable", { cookie: person.cookie, body: { password: person.password } });
    const secret = secretOf(enabled.json.totpURI);
    expect((await server.api("/api/auth/two-factor/verify-totp", { cookie: cookiesOf(enabled.headers) || person.cookie, body: { code: totp(secret) } })).status).toBe(200);

    const pass = password();
    const file = await backupFile({ wif: id.key.toWif(), id: id.bapId }, pass);
    const client = await publicClient("Two-Factor Key App");
    const request = authorizationRequest(client.client_id);
    const { page } = await recordedPage();
    await page.goto(request.url);
    await keySignIn(page, file, pass);
    await page.waitForURL((u) => u.pathname === "/sign-in/two-factor");
    await fillByLabel(page, "Code from your authenticator app", totp(secret));
    await submitWith(page, "Verify");
    expect(new URL(page.url()).pathname).toBe("/consent");
    await submitWith(page, "Allow");
    const claims = await idTokenFor(client.client_id, request, new URL(page.url()));
    expect(claims.sub).toBe(person.user.id);
  });

  it("a wrong password shows an error in the page and sends no sign-in request", async () => {
    const id = freshIdentity();
    await enrol(id);
    const file = await backupFile({ wif: id.key.toWif(), id: id.bapId }, password());
    const { page, requests } = await recordedPage();
    await page.goto(`${server.url}/sign-in`);
    const wrong = "not the backup password";
    await keySignIn(page, file, wrong);

    await expect(alertText(page)).resolves.toMatch(/password does not open this backup/i);
    expect(new URL(page.url()).pathname).toBe("/sign-in");
    await expect(page.getByLabel("Backup password", { exact: true }).inputValue()).resolves.toBe("");
    const all = await requests();
    expect(signInRequests(all)).toEqual([]);
    // Loading the page is all that happened: no request was sent after the click.
    expect(all.filter((r) => r.method !== "GET")).toEqual([]);
    expect(leaks(all, { password: wrong })).toEqual([]);
  });

  it("a backup of an identity nobody registered shows the RESTORE_PROFILE_NOT_FOUND message", async () => {
    const stranger = freshIdentity();
    const pass = password();
    const file = await backupFile({ wif: stranger.key.toWif(), id: stranger.bapId }, pass);
    const { page, context, requests } = await recordedPage();
    await page.goto(`${server.url}/sign-in`);
    const answer = page.waitForResponse((res) => new URL(res.url()).pathname === SIGN_IN);
    await keySignIn(page, file, pass);

    const res = await answer;
    expect(res.status()).toBe(403);
    expect(await res.json()).toMatchObject({ code: "RESTORE_PROFILE_NOT_FOUND" });
    await expect(alertText(page)).resolves.toMatch(/no registered identity matches this backup/i);
    expect(new URL(page.url()).pathname).toBe("/sign-in");
    expect((await context.cookies()).filter((c) => c.name.includes("session_token"))).toEqual([]);
    expect(leaks(await requests(), { password: pass, wif: stranger.key.toWif() })).toEqual([]);
  });

  it("refuses, before any request, a backup whose key does not derive the identity it names", async () => {
    const id = freshIdentity();
    await enrol(id);
    const other = freshIdentity();
    const pass = password();
    // Someone else's key filed under a registered identity: never signed or sent.
    const file = await backupFile({ wif: other.key.toWif(), id: id.bapId }, pass);
    const { page, requests } = await recordedPage();
    await page.goto(`${server.url}/sign-in`);
    await keySignIn(page, file, pass);
    await expect(alertText(page)).resolves.toMatch(/does not match the identity/i);
    expect(signInRequests(await requests())).toEqual([]);
  });

  it("a master backup with several identities asks which one, then signs in as it", async () => {
    const bap = new BAP({ rootPk: PrivateKey.fromRandom().toWif() });
    const first = bap.newId("First");
    const second = bap.newId("Second");
    const memberOf = (master: typeof first) => identityOf(master.getWalletRoot(master.rootPath));
    const chosen = memberOf(second);
    expect(chosen.bapId).toBe(second.getIdentityKey());
    const { userId } = await enrol(chosen);
    const pass = password();
    const master = bap.exportForBackup("Test master") as { ids: string; rootPk: string; label?: string; createdAt: string };
    const file = await backupFile(master, pass);
    const { page, requests } = await recordedPage();
    await page.goto(`${server.url}/sign-in`);

    await keySignIn(page, file, pass);
    const picker = page.getByLabel("Identity", { exact: true });
    await picker.waitFor({ state: "visible" });
    expect((await picker.locator("option").allTextContents()).sort()).toEqual([first.getIdentityKey(), second.getIdentityKey()].sort());
    expect(signInRequests(await requests())).toEqual([]);
    await picker.selectOption(chosen.bapId);
    // No authorization request: signed in, the page goes to the account landing (/).
    await submitWith(page, "Sign in with your identity");

    const session = await page.request.get(`${server.url}/api/auth/get-session`);
    expect((await session.json())?.user).toMatchObject({ id: userId, pubkey: chosen.pubkey });
    const all = await requests();
    const [signIn] = signInRequests(all);
    expect(signIn!.postData).toBe(JSON.stringify({ bapId: chosen.bapId }));
    expect(parseAuthToken(signIn!.headers["x-auth-token"] ?? "")?.pubkey).toBe(chosen.pubkey);
    expect(leaks(all, { password: pass, rootPk: master.rootPk, "chosen member WIF": chosen.key.toWif(), "other member WIF": memberOf(first).key.toWif() })).toEqual([]);
  });

  it("accepts a member backup as bsv-bap writes it (its id encrypted to the member key)", async () => {
    const bap = new BAP({ rootPk: PrivateKey.fromRandom().toWif() });
    const master = bap.newId("Exported member");
    const member = identityOf(master.getWalletRoot(master.rootPath));
    const { userId } = await enrol(member);
    const exported = bap.exportMemberForBackup(member.bapId);
    expect(exported.id).not.toBe(member.bapId);
    const pass = password();
    const file = await backupFile(exported, pass);
    const { page, requests } = await recordedPage();
    await page.goto(`${server.url}/sign-in`);
    await waitForKeyForm(page);
    await page.getByLabel("Backup file", { exact: true }).setInputFiles(file);
    await page.getByLabel("Backup password", { exact: true }).fill(pass);
    await submitWith(page, "Sign in with your identity");
    const session = await page.request.get(`${server.url}/api/auth/get-session`);
    expect((await session.json())?.user?.id).toBe(userId);
    const all = await requests();
    expect(signInRequests(all).map((r) => r.postData)).toEqual([JSON.stringify({ bapId: member.bapId })]);
    expect(leaks(all, { password: pass, wif: exported.wif, "encrypted member id": exported.id })).toEqual([]);
  });

  it("continues a request that demands a fresh login (prompt=login) instead of asking again", async () => {
    const id = freshIdentity();
    await enrol(id);
    const pass = password();
    const file = await backupFile({ wif: id.key.toWif(), id: id.bapId }, pass);
    const client = await publicClient("Fresh Login App");
    const request = authorizationRequest(client.client_id, { prompt: "login", max_age: "0" });
    const { page, requests } = await recordedPage();

    await page.goto(request.url);
    expect(new URL(page.url()).pathname).toBe("/sign-in");
    const signedAt = Math.floor(Date.now() / 1000);
    await keySignIn(page, file, pass);
    await page.waitForURL((u) => u.pathname === "/consent");
    await submitWith(page, "Allow");
    const claims = await idTokenFor(client.client_id, request, new URL(page.url()));
    expect(claims.bap_id).toBe(id.bapId);
    // The authentication the app asked for is the one that just happened.
    expect(Number(claims.auth_time)).toBeGreaterThanOrEqual(signedAt - 1);
    // /oauth2/continue cannot see that the session is new and points back to sign-in; the page
    // then reissued the same request without prompt=login and max_age (and without looping).
    const authorizations = (await requests()).filter((r) => new URL(r.url).pathname === "/api/auth/oauth2/authorize").map((r) => new URL(r.url).searchParams);
    expect(authorizations).toHaveLength(2);
    expect(authorizations[0]!.get("prompt")).toBe("login");
    expect(authorizations[1]!.get("prompt")).toBeNull();
    expect(authorizations[1]!.get("max_age")).toBeNull();
    expect(authorizations[1]!.get("state")).toBe(request.state);
    expect(authorizations[1]!.get("code_challenge")).toBe(authorizations[0]!.get("code_challenge"));
  });

  it("a signed-in person can open their cloud copy (GET /api/backup) instead of a file", async () => {
    const id = freshIdentity();
    const { cookie, userId } = await enrol(id);
    const pass = password();
    const plaintext = { wif: id.key.toWif(), id: id.bapId };
    const stored = await server.api("/api/backup", { cookie, body: { encryptedBackup: await encryptBackup(plaintext, pass) } });
    expect(stored.status, stored.text).toBe(200);

    const { page, context, requests } = await recordedPage();
    await addCookies(context, cookie, server.url);
    await page.goto(`${server.url}/sign-in`);
    await waitForKeyForm(page);
    await page.getByLabel(/my cloud backup/i).check();
    await expect(page.getByLabel("Backup file", { exact: true }).isVisible()).resolves.toBe(false);
    await page.getByLabel("Backup password", { exact: true }).fill(pass);
    const answer = page.waitForResponse((res) => new URL(res.url()).pathname === SIGN_IN);
    await submitWith(page, "Sign in with your identity");
    expect((await answer).status()).toBe(200);

    const all = await requests();
    expect(all.some((r) => r.method === "GET" && new URL(r.url).pathname === "/api/backup")).toBe(true);
    expect(signInRequests(all)).toHaveLength(1);
    expect(leaks(all, { password: pass, wif: id.key.toWif(), "private key hex": id.key.toHex(), "backup plaintext": JSON.stringify(plaintext) })).toEqual([]);
    const session = await page.request.get(`${server.url}/api/auth/get-session`);
    expect((await session.json())?.user?.id).toBe(userId);
  });

  it("without JavaScript the page keeps the e-mail form and says key sign-in needs JavaScript", async () => {
    const { page } = await recordedPage({ javaScriptEnabled: false });
    const res = await page.goto(`${server.url}/sign-in`);
    expect(res?.status()).toBe(200);
    await expect(page.locator('form input[name="email"]').isVisible()).resolves.toBe(true);
    await expect(page.locator('form input[name="password"]').isVisible()).resolves.toBe(true);
    await expect(page.locator("#key-sign-in").isVisible()).resolves.toBe(false);
    await expect(page.locator("noscript").first().textContent()).resolves.toMatch(/needs JavaScript/);
    await expect(page.getByText(/needs JavaScript/).isVisible()).resolves.toBe(true);
  });
});

describe("key sign-in script delivery", () => {
  it("is served from a content-hashed URL with a year-long Cache-Control and an ETag, and pages carry a CSP", async () => {
    const page = await server.api("/sign-in");
    expect(page.status).toBe(200);
    const csp = page.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain("unsafe-inline");
    const src = /<script type="module" src="([^"]+)"/.exec(page.text)?.[1];
    expect(src).toMatch(/^\/assets\/key-sign-in\.[0-9a-f]{16}\.js$/);

    const res = await fetch(server.url + src!, { headers: { "accept-encoding": "identity" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    const body = new Uint8Array(await res.arrayBuffer());
    // Reasonably small for what it carries (secp256k1, BRC-77, PBKDF2/AES-GCM glue, BAP derivation).
    expect(body.length).toBeLessThan(300 * 1024);
    const etag = res.headers.get("etag");
    expect(etag).toBeTruthy();
    const again = await fetch(server.url + src!, { headers: { "if-none-match": etag! } });
    expect(again.status).toBe(304);
    const compressed = await fetch(server.url + src!, { headers: { "accept-encoding": "gzip" } });
    expect(compressed.headers.get("content-encoding")).toBe("gzip");
    expect(new Uint8Array(await compressed.arrayBuffer())).toEqual(body);
    expect((await fetch(`${server.url}/assets/key-sign-in.0123456789abcdef.js`)).status).toBe(404);
  });
});
