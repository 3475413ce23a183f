import { randomBytes, randomUUID } from "node:crypto";
import { generateKeyPair, SignJWT, UnsecuredJWT } from "jose";
import type { Page } from "playwright-core";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError, loadEnv } from "../../lib/env.js";
import { signInProviders } from "../../lib/social-providers.js";
import { addCookies, submitWith } from "../helpers/browser.js";
import { useBrowser, useCallbackServer, useTestServer } from "../helpers/fixtures.js";
import { pkce, registerClient, signUp, token } from "../helpers/oauth.js";
import { cookiesOf, freePort, postForm, startTestServer, uniqueEmail } from "../helpers/server.js";
import { providerEnv, startUpstreamOidc, type UpstreamOidc, type UpstreamUser } from "../helpers/upstream-oidc.js";

/**
 * Social sign-in against a real upstream OpenID Provider (node-oidc-provider on loopback),
 * configured as generic OIDC providers through the OIDC_<N>_* settings. Nothing is stubbed:
 * the browser goes through the upstream's own login and consent pages, and our callback
 * exchanges real codes and verifies real ID tokens.
 */
const PROVIDER = "upstream";
const PROVIDER_NAME = "Upstream ID";
/** A second provider id at the same issuer (another client there): "another linked account". */
const SECOND = "upstream-two";

const browser = useBrowser();
/** A relying party of ours (its redirect URI). */
const app = useCallbackServer();
/** Our own stand-in client at the upstream, to obtain genuine ID tokens for the idToken path. */
const catcher = useCallbackServer();
let upstream: UpstreamOidc;
const server = useTestServer(async () => {
  // The upstream must know our callback URL and we must know its issuer: fix our port first.
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  upstream = await startUpstreamOidc({
    clients: [
      { clientId: "idp-under-test", redirectUris: [`${url}/api/auth/callback/${PROVIDER}`, catcher.redirectUri] },
      { clientId: "idp-under-test-2", redirectUris: [`${url}/api/auth/callback/${SECOND}`] },
    ],
  });
  return {
    PORT: String(port),
    AUTH_URL: url,
    ...providerEnv(1, upstream, { id: PROVIDER, name: PROVIDER_NAME }),
    ...providerEnv(2, upstream, { id: SECOND, index: 1 }),
    // Built-ins are switched on by their credentials; they cannot be reached from here.
    GOOGLE_CLIENT_ID: "google-client.apps.example",
    GOOGLE_CLIENT_SECRET: "google-secret",
    GITHUB_CLIENT_ID: "github-client",
    GITHUB_CLIENT_SECRET: "github-secret",
    TWITTER_CLIENT_ID: "x-client",
    TWITTER_CLIENT_SECRET: "x-secret",
  };
});
afterAll(async () => {
  await upstream?.close();
});

/** A fresh browser profile, signed out everywhere. JavaScript off unless asked: the flow must not need it. */
const freshPage = (opts: { javaScript?: boolean } = {}) => browser.page({ javaScriptEnabled: opts.javaScript ?? false });

let people = 0;
function upstreamUser(overrides: Partial<UpstreamUser> = {}): UpstreamUser {
  people += 1;
  const user = { sub: `upstream-${people}-${randomBytes(4).toString("hex")}`, email: uniqueEmail("social"), name: `Upstream Person ${people}`, ...overrides };
  upstream.addUser(user);
  return user;
}

/** oidc-provider's dev interactions: its login form (any password), then its consent page. */
async function signInAtUpstream(page: Page, sub: string) {
  expect(new URL(page.url()).origin).toBe(upstream.issuer);
  await page.locator('input[name="login"]').fill(sub);
  await page.locator('input[name="password"]').fill("any password at all");
  await submitWith(page, "Sign-in");
  if (new URL(page.url()).origin === upstream.issuer) await submitWith(page, "Continue");
}

/** Every URL the main frame requested, redirects included, in order. */
function navigations(page: Page): URL[] {
  const seen: URL[] = [];
  page.on("request", (request) => {
    if (request.isNavigationRequest() && request.frame() === page.mainFrame()) seen.push(new URL(request.url()));
  });
  return seen;
}

async function sessionOf(page: Page) {
  const res = await page.request.get(`${server.url}/api/auth/get-session`);
  expect(res.status()).toBe(200);
  return (await res.json()) as { user: { id: string; email: string; emailVerified: boolean; name: string } } | null;
}

async function accountsOf(userId: string) {
  return server.db.selectFrom("account").select(["id", "providerId", "accountId", "password"]).where("userId", "=", userId).execute();
}

function hasSessionCookie(headers: Headers): boolean {
  return headers.getSetCookie().some((c) => /session_token=[^;]+/.test(c));
}

/** Starts a sign-in over the API as a browser would: the provider URL and the state cookie. */
async function startSocial(provider = PROVIDER) {
  const res = await server.api("/api/auth/sign-in/social", { body: { provider, callbackURL: `${server.url}/` } });
  expect(res.status).toBe(200);
  const url = new URL(res.json.url);
  return { url, state: url.searchParams.get("state")!, cookie: cookiesOf(res.headers) };
}

/** A genuine ID token from the upstream: an authorization-code flow of its own client, in the browser. */
async function genuineIdToken(user: UpstreamUser, nonce: string): Promise<string> {
  const { verifier, challenge } = pkce();
  const client = upstream.clients[0]!;
  const discovery = (await (await fetch(`${upstream.issuer}/.well-known/openid-configuration`)).json()) as { authorization_endpoint: string; token_endpoint: string };
  const params = new URLSearchParams({
    client_id: client.clientId,
    response_type: "code",
    scope: "openid email profile",
    redirect_uri: catcher.redirectUri,
    state: randomBytes(8).toString("hex"),
    nonce,
    code_challenge: challenge,
    code_challenge_method: "S256",
  });
  const page = await freshPage();
  await page.goto(`${discovery.authorization_endpoint}?${params}`);
  await signInAtUpstream(page, user.sub);
  const code = new URL(page.url()).searchParams.get("code");
  expect(code).toBeTruthy();
  const res = await fetch(discovery.token_endpoint, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString("base64")}` },
    body: new URLSearchParams({ grant_type: "authorization_code", code: code!, redirect_uri: catcher.redirectUri, code_verifier: verifier }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { id_token: string }).id_token;
}

/** Signs a person in with an ID token minted by the upstream's key (valid unless told otherwise). */
async function idTokenSignIn(user: UpstreamUser, opts: { provider?: string; aud?: string } = {}) {
  const nonce = randomBytes(12).toString("base64url");
  const idToken = await upstream.signIdToken({ sub: user.sub, email: user.email, email_verified: true, name: user.name, nonce, ...(opts.aud ? { aud: opts.aud } : {}) });
  const res = await server.api("/api/auth/sign-in/social", { body: { provider: opts.provider ?? PROVIDER, idToken: { token: idToken, nonce } } });
  expect(res.status, res.text).toBe(200);
  return { cookie: cookiesOf(res.headers), token: res.json.token as string, userId: res.json.user.id as string };
}

describe("settings", () => {
  const base = { BETTER_AUTH_SECRET: "x".repeat(32), DATA_DIR: "/tmp/idp-social-settings" };

  it("switches a built-in provider on only when both its client id and secret are set", () => {
    const half = loadEnv({ ...base, GOOGLE_CLIENT_ID: "id-only", DISCORD_CLIENT_SECRET: "secret-only" });
    expect(half.social.builtIn).toEqual({});
    expect(half.warnings.join("\n")).toMatch(/GOOGLE_CLIENT_SECRET is not set/);
    expect(half.warnings.join("\n")).toMatch(/DISCORD_CLIENT_ID is not set/);
    const both = loadEnv({ ...base, APPLE_CLIENT_ID: "com.example.web", APPLE_CLIENT_SECRET: "jwt", TWITTER_CLIENT_ID: "x", TWITTER_CLIENT_SECRET: "y" });
    expect(signInProviders(both.social)).toEqual([
      { id: "twitter", name: "X" },
      { id: "apple", name: "Apple" },
    ]);
  });

  it("reads numbered OIDC providers with their defaults", () => {
    const config = loadEnv({ ...base, OIDC_2_ID: "corp", OIDC_2_ISSUER: "https://login.example.com/", OIDC_2_CLIENT_ID: "c", OIDC_2_CLIENT_SECRET: "s", OIDC_1_ID: "lab", OIDC_1_NAME: "Lab SSO", OIDC_1_ISSUER: "http://127.0.0.1:8080/realm", OIDC_1_CLIENT_ID: "c1", OIDC_1_CLIENT_SECRET: "s1", OIDC_1_SCOPES: "email groups" });
    expect(config.social.oidc).toEqual([
      { id: "lab", name: "Lab SSO", issuer: "http://127.0.0.1:8080/realm", clientId: "c1", clientSecret: "s1", scopes: ["openid", "email", "groups"], tokenAuthMethod: "client_secret_basic" },
      { id: "corp", name: "corp", issuer: "https://login.example.com", clientId: "c", clientSecret: "s", scopes: ["openid", "email", "profile"], tokenAuthMethod: "client_secret_basic" },
    ]);
  });

  it("refuses bad OIDC settings with messages that name the key", () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ OIDC_1_ID: "corp", OIDC_1_CLIENT_ID: "c", OIDC_1_CLIENT_SECRET: "s" }, /OIDC_1_ISSUER: is required/],
      [{ OIDC_1_ID: "corp", OIDC_1_ISSUER: "http://login.example.com", OIDC_1_CLIENT_ID: "c", OIDC_1_CLIENT_SECRET: "s" }, /OIDC_1_ISSUER: must be an https URL/],
      [{ OIDC_1_ID: "google", OIDC_1_ISSUER: "https://accounts.google.com", OIDC_1_CLIENT_ID: "c", OIDC_1_CLIENT_SECRET: "s" }, /OIDC_1_ID: is reserved/],
      [{ OIDC_3_ID: "corp", OIDC_3_ISSUER: "https://a.example", OIDC_3_CLIENTID: "c", OIDC_3_CLIENT_SECRET: "s" }, /OIDC_3_CLIENTID: unknown setting/],
      [{ OIDC_1_ID: "a", OIDC_1_ISSUER: "https://a.example", OIDC_1_CLIENT_ID: "c", OIDC_1_CLIENT_SECRET: "s", OIDC_2_ID: "a", OIDC_2_ISSUER: "https://b.example", OIDC_2_CLIENT_ID: "c", OIDC_2_CLIENT_SECRET: "s" }, /OIDC_2_ID: "a" is used by another/],
      [{ OIDC_1_ID: "Corp SSO", OIDC_1_ISSUER: "https://a.example", OIDC_1_CLIENT_ID: "c", OIDC_1_CLIENT_SECRET: "s" }, /OIDC_1_ID: must be 1-32 lowercase/],
    ];
    for (const [env, message] of cases) {
      expect(() => loadEnv({ ...base, ...env })).toThrow(ConfigError);
      expect(() => loadEnv({ ...base, ...env })).toThrow(message);
    }
  });
});

describe("the sign-in page", () => {
  it("offers one working form per configured provider, in order, without JavaScript", async () => {
    const page = await freshPage();
    const res = await page.goto(`${server.url}/sign-in`);
    expect(res?.status()).toBe(200);
    const buttons = await page.locator('form[action="/sign-in/social"] button').allTextContents();
    expect(buttons.map((b) => b.trim())).toEqual(["Continue with Google", "Continue with GitHub", "Continue with X", `Continue with ${PROVIDER_NAME}`, `Continue with ${SECOND}`]);
    expect(await page.locator('form[action="/sign-in/social"] input[name="provider"]').evaluateAll((els) => els.map((e) => (e as HTMLInputElement).value))).toEqual([
      "google",
      "github",
      "twitter",
      PROVIDER,
      SECOND,
    ]);
  });

  it("sends a built-in provider's button to that provider with our callback, state and PKCE", async () => {
    const res = await postForm(server, "/sign-in/social", { provider: "google" }, { origin: server.url });
    expect(res.status).toBe(303);
    const to = new URL(res.headers.get("location")!);
    expect(to.origin).toBe("https://accounts.google.com");
    expect(to.searchParams.get("redirect_uri")).toBe(`${server.url}/api/auth/callback/google`);
    expect(to.searchParams.get("client_id")).toBe("google-client.apps.example");
    expect(to.searchParams.get("code_challenge_method")).toBe("S256");
    expect(to.searchParams.get("state")).toBeTruthy();
    expect(res.headers.getSetCookie().some((c) => c.includes("state="))).toBe(true);
  });

  it("refuses a cross-site post and an unknown provider without leaving for any provider", async () => {
    const cross = await postForm(server, "/sign-in/social", { provider: PROVIDER }, { origin: "https://evil.example", "sec-fetch-site": "cross-site" });
    expect(cross.status).toBe(403);
    const unknown = await postForm(server, "/sign-in/social", { provider: "myspace" }, { origin: server.url });
    expect(unknown.status).toBe(303);
    expect(unknown.headers.get("location")).toBe("/sign-in");
  });
});

describe("a provider that cannot be reached", () => {
  it("does not stop the server; its button answers with a plain message on the sign-in page", async () => {
    // Nothing listens there: discovery fails at start-up and again when the button is used.
    const closed = await freePort();
    const down = await startTestServer({ OIDC_1_ID: "down", OIDC_1_NAME: "Down SSO", OIDC_1_ISSUER: `http://127.0.0.1:${closed}`, OIDC_1_CLIENT_ID: "c", OIDC_1_CLIENT_SECRET: "s" });
    try {
      const page = await browser.page({ javaScriptEnabled: false });
      await page.goto(`${down.url}/sign-in`);
      await submitWith(page, "Continue with Down SSO");
      expect(new URL(page.url()).origin).toBe(down.url);
      await expect(page.getByRole("alert").textContent()).resolves.toMatch(/Down SSO is not available right now/);
    } finally {
      await down.close();
    }
  });
});

describe("sign-in through an upstream OpenID provider", () => {
  it("creates a signed-in person from the provider's verified e-mail and records the account", async () => {
    const user = upstreamUser();
    const page = await freshPage();
    const seen = navigations(page);
    await page.goto(`${server.url}/sign-in`);
    await submitWith(page, `Continue with ${PROVIDER_NAME}`);
    await signInAtUpstream(page, user.sub);

    // The authorization request we sent upstream: our callback, PKCE S256, state and a nonce.
    const request = seen.find((u) => u.origin === upstream.issuer && u.pathname === "/auth" && u.searchParams.has("client_id"))!;
    expect(request.searchParams.get("redirect_uri")).toBe(`${server.url}/api/auth/callback/${PROVIDER}`);
    expect(request.searchParams.get("code_challenge_method")).toBe("S256");
    expect(request.searchParams.get("scope")?.split(" ")).toEqual(expect.arrayContaining(["openid", "email", "profile"]));
    expect(request.searchParams.get("state")).toBeTruthy();
    expect(request.searchParams.get("nonce")).toBeTruthy();
    // And the provider's answer came back to our callback (never stubbed).
    const callback = seen.find((u) => u.origin === server.url && u.pathname === `/api/auth/callback/${PROVIDER}`)!;
    expect(callback.searchParams.get("code")).toBeTruthy();
    expect(callback.searchParams.get("state")).toBe(request.searchParams.get("state"));

    const session = await sessionOf(page);
    expect(session?.user).toMatchObject({ email: user.email, emailVerified: true, name: user.name });
    expect(await accountsOf(session!.user.id)).toEqual([expect.objectContaining({ providerId: PROVIDER, accountId: user.sub })]);

    // A second visit signs the same person in again: no second user, no second account.
    const again = await freshPage();
    await again.goto(`${server.url}/sign-in`);
    await submitWith(again, `Continue with ${PROVIDER_NAME}`);
    await signInAtUpstream(again, user.sub);
    expect((await sessionOf(again))?.user.id).toBe(session!.user.id);
    expect(await accountsOf(session!.user.id)).toHaveLength(1);
  });

  it("resumes a pending authorization of one of our clients after the provider round trip", async () => {
    const user = upstreamUser();
    const client = await registerClient(server, { client_name: "Social Resume App", redirect_uris: [app.redirectUri] });
    const { verifier, challenge } = pkce();
    const state = randomBytes(12).toString("base64url");
    const params = new URLSearchParams({
      response_type: "code",
      client_id: client.client_id,
      redirect_uri: app.redirectUri,
      scope: "openid profile email",
      state,
      nonce: randomBytes(12).toString("base64url"),
      code_challenge: challenge,
      code_challenge_method: "S256",
    });
    const page = await freshPage();
    await page.goto(`${server.url}/api/auth/oauth2/authorize?${params}`);
    expect(new URL(page.url()).pathname).toBe("/sign-in");
    expect(await page.locator('form[action="/sign-in/social"] input[name="oauth_query"]').count()).toBeGreaterThan(0);

    await submitWith(page, `Continue with ${PROVIDER_NAME}`);
    await signInAtUpstream(page, user.sub);
    // Back from the provider, the authorization continues: our consent page for this client.
    expect(new URL(page.url()).pathname).toBe("/consent");
    await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toContain("Social Resume App");
    await submitWith(page, "Allow");

    const back = new URL(page.url());
    expect(`${back.origin}${back.pathname}`).toBe(app.redirectUri);
    expect(back.searchParams.get("state")).toBe(state);
    const code = back.searchParams.get("code");
    expect(code).toBeTruthy();
    const tokens = await token(server, { grant_type: "authorization_code", code: code!, redirect_uri: app.redirectUri, client_id: client.client_id, code_verifier: verifier });
    expect(tokens.status).toBe(200);
    const claims = JSON.parse(Buffer.from(tokens.json.id_token.split(".")[1], "base64url").toString());
    expect(claims.sub).toBe((await sessionOf(page))!.user.id);
    const userinfo = await server.api("/api/auth/oauth2/userinfo", { headers: { authorization: `Bearer ${tokens.json.access_token}` } });
    expect(userinfo.json).toMatchObject({ sub: claims.sub, email: user.email, email_verified: true });
  });

  it("does not sign in to an existing unverified account with the same e-mail, and says so on the sign-in page", async () => {
    const user = upstreamUser();
    const existing = await signUp(server, { email: user.email });
    const page = await freshPage();
    await page.goto(`${server.url}/sign-in`);
    await submitWith(page, `Continue with ${PROVIDER_NAME}`);
    await signInAtUpstream(page, user.sub);
    expect(new URL(page.url()).pathname).toBe("/sign-in");
    expect(new URL(page.url()).searchParams.get("error")).toBe("account_not_linked");
    await expect(page.getByRole("alert").textContent()).resolves.toMatch(/already exists/i);
    expect(await sessionOf(page)).toBeNull();
    expect(await accountsOf(existing.user.id)).toEqual([expect.objectContaining({ providerId: "credential" })]);
  });
});

describe("form-post callbacks (POST /api/auth/callback/{id}, as Sign in with Apple answers)", () => {
  it("takes the provider's answer as a form POST to the callback, moves it to a GET of the same callback and signs the person in", async () => {
    const user = upstreamUser();
    // The auto-submitting form needs JavaScript, as at Apple.
    const page = await freshPage({ javaScript: true });
    // The flow starts as the sign-in button starts it (state cookie in this browser), asking the
    // upstream for response_mode=form_post (Apple's only mode when scopes are asked for).
    const started = await startSocial();
    // As our Set-Cookie has them: HttpOnly, SameSite=Lax (so a cross-site POST does not carry them).
    await page.context().addCookies(started.cookie.split("; ").map((pair) => ({ name: pair.split("=")[0]!, value: pair.slice(pair.indexOf("=") + 1), url: server.url, httpOnly: true, sameSite: "Lax" as const })));
    started.url.searchParams.set("response_mode", "form_post");
    const posts: { url: URL; body: URLSearchParams }[] = [];
    const seen = navigations(page);
    page.on("request", (request) => {
      if (request.method() === "POST" && request.isNavigationRequest()) posts.push({ url: new URL(request.url()), body: new URLSearchParams(request.postData() ?? "") });
    });
    await page.goto(started.url.href);
    await signInAtUpstream(page, user.sub);
    await page.waitForURL((url) => url.origin === server.url && !url.pathname.startsWith("/api/auth/callback"));

    // The code and state came as a form POST to our callback, not in a query string...
    const post = posts.find((p) => p.url.origin === server.url && p.url.pathname === `/api/auth/callback/${PROVIDER}`);
    expect(post).toBeDefined();
    expect(post!.url.search).toBe("");
    expect(post!.body.get("code")).toBeTruthy();
    expect(post!.body.get("state")).toBe(started.state);
    // ...and were moved to a GET of the same callback, where the (SameSite=Lax) state cookie is sent.
    const get = seen.find((u) => u.origin === server.url && u.pathname === `/api/auth/callback/${PROVIDER}` && u.searchParams.has("code"));
    expect(get?.searchParams.get("state")).toBe(post!.body.get("state"));
    const session = await sessionOf(page);
    expect(session?.user).toMatchObject({ email: user.email, emailVerified: true });
    expect(await accountsOf(session!.user.id)).toEqual([expect.objectContaining({ providerId: PROVIDER, accountId: user.sub })]);
  });

  it("refuses a forged form POST: no session, the error named on the GET it is moved to", async () => {
    const started = await startSocial();
    // A cross-site form POST carries no SameSite=Lax cookie; the GET it is moved to does.
    const res = await fetch(`${server.url}/api/auth/callback/${PROVIDER}`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: upstream.issuer },
      body: new URLSearchParams({ code: "forged-code", state: started.state }),
      redirect: "manual",
    });
    expect(res.status).toBe(302);
    expect(hasSessionCookie(res.headers)).toBe(false);
    const moved = new URL(res.headers.get("location")!, server.url);
    expect(moved.pathname).toBe(`/api/auth/callback/${PROVIDER}`);
    const followed = await fetch(moved, { headers: { cookie: started.cookie }, redirect: "manual" });
    expect(followed.status).toBe(302);
    expect(hasSessionCookie(followed.headers)).toBe(false);
    expect(new URL(followed.headers.get("location")!, server.url).searchParams.get("error")).toBe("invalid_code");
  });

  it("refuses a form POST that carries our cookies from an origin we do not trust (403), before reading it", async () => {
    const started = await startSocial();
    const res = await fetch(`${server.url}/api/auth/callback/${PROVIDER}`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: "https://evil.example", cookie: started.cookie },
      body: new URLSearchParams({ code: "forged-code", state: started.state }),
      redirect: "manual",
    });
    expect(res.status).toBe(403);
    expect(hasSessionCookie(res.headers)).toBe(false);
  });
});

describe("forged and mismatched callbacks", () => {
  async function callback(query: Record<string, string>, cookie?: string) {
    const res = await fetch(`${server.url}/api/auth/callback/${PROVIDER}?${new URLSearchParams(query)}`, { headers: cookie ? { cookie } : {}, redirect: "manual" });
    expect(res.status).toBe(302);
    expect(hasSessionCookie(res.headers)).toBe(false);
    return new URL(res.headers.get("location")!, server.url).searchParams.get("error");
  }

  it("refuses a callback without state, with a state we never issued, or in a browser that did not start it", async () => {
    expect(await callback({ code: "forged" })).toBe("state_not_found");
    expect(await callback({ code: "forged", state: randomBytes(24).toString("base64url") })).toBe("state_mismatch");
    // A genuine state, but without the state cookie of the browser that started the flow (login CSRF).
    const started = await startSocial();
    expect(await callback({ code: "forged", state: started.state })).toBe("state_mismatch");
  });

  it("refuses a forged code, and a response that names another issuer (RFC 9207)", async () => {
    const first = await startSocial();
    expect(await callback({ code: "forged-code", state: first.state }, first.cookie)).toBe("invalid_code");
    const second = await startSocial();
    expect(await callback({ code: "forged-code", state: second.state, iss: "https://evil.example" }, second.cookie)).toBe("issuer_mismatch");
  });

  it("refuses a real code when the browser carries another flow's state", async () => {
    // The victim's browser starts a flow; an attacker feeds it their own code and state.
    const user = upstreamUser();
    const attacker = await startSocial();
    const page = await freshPage();
    await page.goto(attacker.url.href);
    const seen = navigations(page);
    await signInAtUpstream(page, user.sub);
    // This browser never got the attacker's state cookie: the callback refuses the real code.
    const cb = seen.find((u) => u.pathname === `/api/auth/callback/${PROVIDER}`);
    expect(cb?.searchParams.get("code")).toBeTruthy();
    expect(new URL(page.url()).searchParams.get("error")).toBe("state_mismatch");
    expect(await sessionOf(page)).toBeNull();
  });
});

describe("ID-token sign-in (idToken in /sign-in/social)", () => {
  it("signs in with a genuine ID token from the provider and its nonce", async () => {
    const user = upstreamUser();
    const nonce = randomBytes(16).toString("base64url");
    const idToken = await genuineIdToken(user, nonce);
    const res = await server.api("/api/auth/sign-in/social", { body: { provider: PROVIDER, idToken: { token: idToken, nonce } } });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({ redirect: false, user: { email: user.email, emailVerified: true } });
    expect(typeof res.json.token).toBe("string");
    const session = await server.api("/api/auth/get-session", { cookie: cookiesOf(res.headers) });
    expect(session.json.user.email).toBe(user.email);
    expect(await accountsOf(session.json.user.id)).toEqual([expect.objectContaining({ providerId: PROVIDER, accountId: user.sub })]);
  });

  it("refuses every token that is not verified in full: signature, iss, aud, exp and nonce", async () => {
    const user = upstreamUser();
    const nonce = randomBytes(16).toString("base64url");
    const good = { sub: user.sub, email: user.email, email_verified: true, nonce };
    const now = Math.floor(Date.now() / 1000);
    const foreign = await generateKeyPair("RS256");
    const genuine = await upstream.signIdToken(good);
    const [h, p, s] = genuine.split(".") as [string, string, string];
    const tampered = `${h}.${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(p, "base64url").toString()), email: "victim@example.com" })).toString("base64url")}.${s}`;

    const refused: Array<[string, { token: string; nonce?: string }]> = [
      ["no nonce in the body", { token: genuine }],
      ["another nonce", { token: genuine, nonce: "not-the-nonce" }],
      ["expired", { token: await upstream.signIdToken({ ...good, iat: now - 7200, exp: now - 3600 }), nonce }],
      ["another audience", { token: await upstream.signIdToken({ ...good, aud: "someone-else" }), nonce }],
      ["another issuer", { token: await upstream.signIdToken({ ...good, iss: "https://evil.example" }), nonce }],
      ["signed by another key", { token: await new SignJWT({ iss: upstream.issuer, aud: upstream.clients[0]!.clientId, iat: now, exp: now + 300, ...good }).setProtectedHeader({ alg: "RS256", kid: "upstream-1" }).sign(foreign.privateKey), nonce }],
      ["unsigned (alg none)", { token: new UnsecuredJWT({ iss: upstream.issuer, aud: upstream.clients[0]!.clientId, ...good }).setIssuedAt().setExpirationTime("5m").encode(), nonce }],
      ["tampered payload", { token: tampered, nonce }],
      ["not a JWT", { token: "opaque-token", nonce }],
    ];
    for (const [why, idToken] of refused) {
      const res = await server.api("/api/auth/sign-in/social", { body: { provider: PROVIDER, idToken } });
      expect(res.status, why).toBe(401);
      expect(hasSessionCookie(res.headers), why).toBe(false);
    }
    const users = await server.db.selectFrom("user").select("id").where("email", "in", [user.email, "victim@example.com"]).execute();
    expect(users).toEqual([]);

    // The control: the same claims, properly signed and with the nonce, are accepted.
    const ok = await server.api("/api/auth/sign-in/social", { body: { provider: PROVIDER, idToken: { token: genuine, nonce } } });
    expect(ok.status, ok.text).toBe(200);
  });

  it("is not offered for providers without ID tokens (GitHub)", async () => {
    const user = upstreamUser();
    const res = await server.api("/api/auth/sign-in/social", { body: { provider: "github", idToken: { token: await upstream.signIdToken({ sub: user.sub, email: user.email }) } } });
    expect(res.status).toBe(404);
    expect(res.json.code).toBe("ID_TOKEN_NOT_SUPPORTED");
  });
});

describe("linking and unlinking accounts", () => {
  async function unlink(cookieOrBearer: { cookie?: string; bearer?: string }, accountId: string) {
    return server.api("/api/auth/unlink-account", {
      body: { accountId },
      cookie: cookieOrBearer.cookie,
      headers: cookieOrBearer.bearer ? { authorization: `Bearer ${cookieOrBearer.bearer}` } : {},
    });
  }
  const now = () => new Date();

  it("links the provider to a signed-in person through the provider's pages; with a password left, it can be unlinked", async () => {
    const user = upstreamUser();
    const person = await signUp(server, { email: user.email });
    const start = await server.api("/api/auth/link-social", { cookie: person.cookie, body: { provider: PROVIDER, callbackURL: `${server.url}/` } });
    expect(start.status, start.text).toBe(200);
    const page = await freshPage();
    await addCookies(page.context(), `${person.cookie}; ${cookiesOf(start.headers)}`, server.url);
    await page.goto(start.json.url);
    await signInAtUpstream(page, user.sub);
    expect(new URL(page.url()).searchParams.get("error")).toBeNull();

    const linked = await accountsOf(person.user.id);
    expect(linked.map((a) => a.providerId).sort()).toEqual(["credential", PROVIDER]);
    const social = linked.find((a) => a.providerId === PROVIDER)!;
    expect(social.accountId).toBe(user.sub);
    // The person can now sign in with the provider too (the link, not a new user).
    const viaProvider = await idTokenSignIn(user);
    expect(viaProvider.userId).toBe(person.user.id);

    const res = await unlink({ cookie: person.cookie }, social.id);
    expect(res.status, res.text).toBe(200);
    expect((await accountsOf(person.user.id)).map((a) => a.providerId)).toEqual(["credential"]);
  });

  it("removes a password when a linked account remains, but never the last way to sign in (cookie or bearer)", async () => {
    const user = upstreamUser();
    const person = await signUp(server, { email: user.email });
    const nonce = randomBytes(8).toString("hex");
    const link = await server.api("/api/auth/link-social", {
      cookie: person.cookie,
      body: { provider: PROVIDER, idToken: { token: await upstream.signIdToken({ sub: user.sub, email: user.email, email_verified: true, nonce }), nonce } },
    });
    expect(link.status, link.text).toBe(200);
    const accounts = await accountsOf(person.user.id);
    const credential = accounts.find((a) => a.providerId === "credential")!;
    const social = accounts.find((a) => a.providerId === PROVIDER)!;

    expect((await unlink({ cookie: person.cookie }, credential.id)).status).toBe(200);
    for (const auth of [{ cookie: person.cookie }, { bearer: person.token }]) {
      const res = await unlink(auth, social.id);
      expect(res.status).toBe(400);
      expect(res.json.code).toBe("LAST_SIGN_IN_METHOD");
    }
    expect(await accountsOf(person.user.id)).toEqual([expect.objectContaining({ providerId: PROVIDER })]);
  });

  it("lets a social-only person unlink when a BAP identity, a passkey or another linked account remains", async () => {
    // BAP identity.
    const withBap = await idTokenSignIn(upstreamUser());
    const [bapAccount] = await accountsOf(withBap.userId);
    expect((await unlink({ cookie: withBap.cookie }, bapAccount!.id)).json.code).toBe("LAST_SIGN_IN_METHOD");
    await server.db
      .insertInto("bapIdentity")
      .values({ id: randomUUID(), userId: withBap.userId, bapId: `bap${randomBytes(12).toString("hex")}`, rootAddress: "1BoatSLRHtKNngkdXEeobR76b53LETtpyT", isPrimary: true, createdAt: now(), updatedAt: now() })
      .execute();
    expect((await unlink({ cookie: withBap.cookie }, bapAccount!.id)).status).toBe(200);

    // Passkey.
    const withPasskey = await idTokenSignIn(upstreamUser());
    const [passkeyAccount] = await accountsOf(withPasskey.userId);
    await server.db
      .insertInto("passkey")
      .values({ id: randomUUID(), userId: withPasskey.userId, publicKey: "pk", credentialID: randomBytes(16).toString("base64url"), counter: 0, deviceType: "singleDevice", backedUp: false, createdAt: now() })
      .execute();
    expect((await unlink({ cookie: withPasskey.cookie }, passkeyAccount!.id)).status).toBe(200);

    // Another linked account, at a second configured provider.
    const twice = upstreamUser();
    const both = await idTokenSignIn(twice);
    const nonce = randomBytes(8).toString("hex");
    const second = await server.api("/api/auth/link-social", {
      cookie: both.cookie,
      body: { provider: SECOND, idToken: { token: await upstream.signIdToken({ sub: twice.sub, email: twice.email, email_verified: true, nonce, aud: upstream.clients[1]!.clientId }), nonce } },
    });
    expect(second.status, second.text).toBe(200);
    const accounts = await accountsOf(both.userId);
    expect(accounts.map((a) => a.providerId).sort()).toEqual([PROVIDER, SECOND]);
    expect((await unlink({ cookie: both.cookie }, accounts.find((a) => a.providerId === PROVIDER)!.id)).status).toBe(200);
    const last = await unlink({ cookie: both.cookie }, accounts.find((a) => a.providerId === SECOND)!.id);
    expect(last.status).toBe(400);
    expect(last.json.code).toBe("LAST_SIGN_IN_METHOD");
  });

  it("does not count an account at a provider that is no longer configured", async () => {
    const person = await idTokenSignIn(upstreamUser());
    await server.db
      .insertInto("account")
      .values({ id: randomUUID(), accountId: "old-123", providerId: "retired-provider", userId: person.userId, createdAt: now(), updatedAt: now() })
      .execute();
    const social = (await accountsOf(person.userId)).find((a) => a.providerId === PROVIDER)!;
    const res = await unlink({ cookie: person.cookie }, social.id);
    expect(res.status).toBe(400);
    expect(res.json.code).toBe("LAST_SIGN_IN_METHOD");
  });
});
