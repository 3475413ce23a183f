import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authorize, authorizeUrl, pkce, registerClient, signUp, token } from "../helpers/oauth.js";
import { linkIn, mailbox } from "../helpers/mailbox.js";
import { cookiesOf, postForm, startTestServer, type TestServer } from "../helpers/server.js";

/**
 * Token management, black-box: RFC 7662 introspection, RFC 7009 revocation, OIDC
 * RP-Initiated Logout, and the authorized-apps routes. SPEC.md: "Revoking a token,
 * revoking an authorized app, ending the service session and signing out of a client
 * application are separate operations."
 */

const RP_REDIRECT = "https://rp.example.com/callback";
const RP_LOGGED_OUT = "https://rp.example.com/logged-out";

let server: TestServer;
let keeping: TestServer;
const box = mailbox();
beforeAll(async () => {
  [server, keeping] = await Promise.all([
    startTestServer({}, { mailer: box.mailer }),
    startTestServer({ KEEP_OAUTH_GRANTS_ON_PASSWORD_RESET: "true" }, { mailer: box.mailer }),
  ]);
});
afterAll(async () => {
  await Promise.all([server?.close(), keeping?.close()]);
});

type Json = Record<string, any>;

const form = (path: string, fields: Record<string, string>, headers: Record<string, string> = {}) => postForm(server, path, fields, headers);

const basicAuth = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`;

/** A confidential web client (client_secret_basic) that registered a post-logout redirect URI. */
async function confidentialClient(extra: Record<string, unknown> = {}) {
  const client = await registerClient(server, {
    client_name: "Token Test RP",
    application_type: "web",
    token_endpoint_auth_method: "client_secret_basic",
    redirect_uris: [RP_REDIRECT],
    post_logout_redirect_uris: [RP_LOGGED_OUT],
    ...extra,
  });
  expect(typeof client.client_secret).toBe("string");
  return { ...client, auth: basicAuth(client.client_id, client.client_secret!) };
}

type Client = Awaited<ReturnType<typeof confidentialClient>>;
type Person = Awaited<ReturnType<typeof signUp>>;

/** Authorization code + PKCE for `person` with `client`, exchanged with client_secret_basic. */
async function grant(person: Person, client: Client, scope = "openid profile email offline_access") {
  const { verifier, challenge } = pkce();
  const auth = await authorize(server, { clientId: client.client_id, cookie: person.cookie, challenge, scope, redirectUri: RP_REDIRECT });
  expect(auth.code, auth.url.toString()).toBeTruthy();
  const res = await token(server, { grant_type: "authorization_code", code: auth.code!, redirect_uri: RP_REDIRECT, code_verifier: verifier }, { authorization: client.auth });
  expect(res.status, res.text).toBe(200);
  return res.json as { access_token: string; refresh_token: string; id_token: string; scope: string; expires_in: number };
}

async function setup() {
  const person = await signUp(server);
  const client = await confidentialClient();
  const tokens = await grant(person, client);
  return { person, client, tokens };
}

const introspect = (client: Client, value: string, hint?: string) =>
  form("/api/auth/oauth2/introspect", { token: value, ...(hint ? { token_type_hint: hint } : {}) }, { authorization: client.auth });
const revoke = (client: Client, value: string, hint?: string) =>
  form("/api/auth/oauth2/revoke", { token: value, ...(hint ? { token_type_hint: hint } : {}) }, { authorization: client.auth });
const refresh = (client: Client, refreshToken: string) => token(server, { grant_type: "refresh_token", refresh_token: refreshToken }, { authorization: client.auth });

async function userinfo(accessToken: string) {
  const res = await fetch(`${server.url}/api/auth/oauth2/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: text ? JSON.parse(text) : null };
}

async function sessionUser(cookie: string): Promise<string | null> {
  const res = await server.api("/api/auth/get-session", { cookie });
  expect(res.status).toBe(200);
  return res.json?.user?.id ?? null;
}

async function signInAgain(person: Person) {
  const res = await server.api("/api/auth/sign-in/email", { body: { email: person.email, password: person.password } });
  expect(res.status).toBe(200);
  return cookiesOf(res.headers);
}

/** Where GET /oauth2/authorize sends a signed-in person who already has a session. */
async function authorizeStep(client: Client, cookie: string) {
  const { challenge } = pkce();
  const res = await server.api(
    authorizeUrl(server, {
      response_type: "code",
      client_id: client.client_id,
      redirect_uri: RP_REDIRECT,
      scope: "openid profile email offline_access",
      state: "st",
      code_challenge: challenge,
      code_challenge_method: "S256",
    }),
    { cookie },
  );
  const location = res.status >= 300 && res.status < 400 ? res.headers.get("location") : (res.json?.url ?? null);
  expect(location, `${res.status} ${res.text}`).toBeTruthy();
  return new URL(location!, server.url);
}

/** A top-level browser navigation (fetch() always says sec-fetch-mode: cors). */
function navigate(path: string, cookie?: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      server.url + path,
      {
        method: "GET",
        headers: {
          accept: "text/html,application/xhtml+xml",
          "sec-fetch-mode": "navigate",
          "sec-fetch-dest": "document",
          ...(cookie ? { cookie } : {}),
        },
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk) => (body += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

function jwtPayload(jwt: string): Json {
  return JSON.parse(Buffer.from(jwt.split(".")[1]!, "base64url").toString("utf8"));
}

function expectOAuthError(res: { status: number; headers: Headers; json: any }, status: number, error: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toMatch(/^application\/json\b/);
  expect(res.json).toMatchObject({ error });
  if (res.json.error_description !== undefined) expect(typeof res.json.error_description).toBe("string");
}

function expectProblem(res: { status: number; headers: Headers; json: any }, status: number) {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json\b/);
  expect(res.json).toMatchObject({ type: expect.any(String), title: expect.any(String), status, detail: expect.any(String) });
}

describe("discovery", () => {
  it("advertises the introspection, revocation and end-session endpoints", async () => {
    const res = await server.api("/.well-known/openid-configuration");
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      introspection_endpoint: `${server.url}/api/auth/oauth2/introspect`,
      revocation_endpoint: `${server.url}/api/auth/oauth2/revoke`,
      end_session_endpoint: `${server.url}/api/auth/oauth2/end-session`,
    });
    expect(res.json.introspection_endpoint_auth_methods_supported).toContain("client_secret_basic");
    expect(res.json.revocation_endpoint_auth_methods_supported).toContain("client_secret_basic");
  });
});

describe("RFC 7662 introspection", () => {
  it("describes an active access token to its authenticated client", async () => {
    const { person, client, tokens } = await setup();
    const res = await introspect(client, tokens.access_token, "access_token");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json\b/);
    expect(res.headers.get("cache-control")).toContain("no-store");
    const now = Math.floor(Date.now() / 1000);
    expect(res.json).toMatchObject({ active: true, sub: person.user.id, client_id: client.client_id, iss: server.url });
    expect(res.json.scope.split(" ")).toEqual(expect.arrayContaining(["openid", "profile", "email", "offline_access"]));
    expect(res.json.exp).toBeGreaterThan(now);
    expect(res.json.exp).toBeLessThanOrEqual(now + tokens.expires_in + 5);
    expect(typeof res.json.iat).toBe("number");
  });

  it("describes an active refresh token", async () => {
    const { person, client, tokens } = await setup();
    const res = await introspect(client, tokens.refresh_token, "refresh_token");
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ active: true, sub: person.user.id, client_id: client.client_id });
    expect(res.json.exp).toBeGreaterThan(Math.floor(Date.now() / 1000));
  });

  it("answers active false, and nothing else, for an unknown token", async () => {
    const { client } = await setup();
    const res = await introspect(client, "not-a-token-we-issued");
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ active: false });
  });

  it("refuses unauthenticated callers and wrong secrets with 401 invalid_client", async () => {
    const { client, tokens } = await setup();
    const anonymous = await form("/api/auth/oauth2/introspect", { token: tokens.access_token });
    expectOAuthError(anonymous, 401, "invalid_client");
    expect(anonymous.json).not.toHaveProperty("active");
    const idOnly = await form("/api/auth/oauth2/introspect", { token: tokens.access_token, client_id: client.client_id });
    expectOAuthError(idOnly, 401, "invalid_client");
    const wrongSecret = await form("/api/auth/oauth2/introspect", { token: tokens.access_token }, { authorization: basicAuth(client.client_id, "wrong-secret") });
    expectOAuthError(wrongSecret, 401, "invalid_client");
    // A public client has nothing to authenticate with.
    const publicClient = await registerClient(server);
    expectOAuthError(await form("/api/auth/oauth2/introspect", { token: tokens.access_token, client_id: publicClient.client_id }), 401, "invalid_client");
  });

  it("does not describe one client's tokens to another client", async () => {
    const { client, tokens } = await setup();
    const other = await confidentialClient();
    expect((await introspect(other, tokens.access_token)).json).toEqual({ active: false });
    expect((await introspect(other, tokens.refresh_token)).json).toEqual({ active: false });
    expect((await introspect(client, tokens.access_token)).json.active).toBe(true);
  });
});

describe("introspection of token shapes (opaque, JWS-shaped, ID token)", () => {
  it("finds an opaque access token without a token_type_hint, and a refresh token after it", async () => {
    const { person, client, tokens } = await setup();
    expect(tokens.access_token).not.toContain(".");
    expect((await introspect(client, tokens.access_token)).json).toMatchObject({ active: true, sub: person.user.id, client_id: client.client_id });
    expect((await introspect(client, tokens.refresh_token)).json).toMatchObject({ active: true, sub: person.user.id });
  });

  it("answers active false for JWS-shaped strings, and for the ID token (a JWT we signed, not an access token)", async () => {
    const { client, tokens } = await setup();
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
    const [idHeader, idPayload] = tokens.id_token.split(".");
    const forged = [
      "a.b.c",
      `${b64({ alg: "RS256" })}.${b64({ sub: "x" })}.sig`,
      `${b64({ alg: "RS256", kid: "no-such-key" })}.${b64({ sub: "x" })}.sig`,
      `${b64({ alg: "HS256" })}.${b64({ sub: "x" })}.sig`,
      `${b64({ alg: "none" })}.${b64({ sub: "x" })}.`,
      // Our own header and claims with someone else's signature.
      `${idHeader}.${idPayload}.${Buffer.from("forged").toString("base64url")}`,
    ];
    for (const value of [...forged, tokens.id_token]) {
      const res = await introspect(client, value);
      expect(res.status, `${value}: ${res.text}`).toBe(200);
      expect(res.json).toEqual({ active: false });
      expect((await userinfo(value)).status, value).toBe(401);
    }
  });
});

describe("repeated request parameters (RFC 6749 §3.1/§3.2: sent at most once)", () => {
  const raw = (path: string, body: string, headers: Record<string, string> = {}) =>
    fetch(server.url + path, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", ...headers }, body }).then(async (res) => ({
      status: res.status,
      headers: res.headers,
      json: JSON.parse(await res.text()),
    }));

  it("refuses a repeated client_id or client_secret at the token endpoint, and the refresh token still works after", async () => {
    const { client, tokens } = await setup();
    const rt = encodeURIComponent(tokens.refresh_token);
    const id = encodeURIComponent(client.client_id);
    const secret = encodeURIComponent(client.client_secret!);
    const twiceId = await raw("/api/auth/oauth2/token", `grant_type=refresh_token&refresh_token=${rt}&client_id=${id}&client_id=${id}&client_secret=${secret}`);
    expectOAuthError(twiceId, 400, "invalid_request");
    const twiceSecret = await raw("/api/auth/oauth2/token", `grant_type=refresh_token&refresh_token=${rt}&client_id=${id}&client_secret=${secret}&client_secret=${secret}`);
    expectOAuthError(twiceSecret, 400, "invalid_request");
    expect(twiceId.json.access_token).toBeUndefined();
    // Nothing was spent: the refresh token is still the current one.
    expect((await refresh(client, tokens.refresh_token)).status).toBe(200);
  });

  it("refuses a repeated client_id at introspection, and accepts the single one", async () => {
    const { client, tokens } = await setup();
    const id = encodeURIComponent(client.client_id);
    const body = `token=${encodeURIComponent(tokens.access_token)}&client_id=${id}&client_id=${id}`;
    expectOAuthError(await raw("/api/auth/oauth2/introspect", body, { authorization: client.auth }), 400, "invalid_request");
    const once = await raw("/api/auth/oauth2/introspect", `token=${encodeURIComponent(tokens.access_token)}&client_id=${id}`, { authorization: client.auth });
    expect(once.json.active).toBe(true);
  });
});

describe("RFC 7009 revocation", () => {
  it("answers 200 for tokens it does not know (§2.2), but needs client authentication", async () => {
    const { client } = await setup();
    for (const hint of [undefined, "access_token", "refresh_token"]) {
      const res = await revoke(client, "never-issued-token", hint);
      expect(res.status, `${hint}: ${res.text}`).toBe(200);
      expect(res.json?.error).toBeUndefined();
    }
    expectOAuthError(await form("/api/auth/oauth2/revoke", { token: "never-issued-token" }), 401, "invalid_client");
    expectOAuthError(await form("/api/auth/oauth2/revoke", { token: "x" }, { authorization: basicAuth(client.client_id, "wrong-secret") }), 401, "invalid_client");
  });

  it("answers every 200 alike (known, unknown, another client's, forged JWS-shaped tokens): the body says nothing", async () => {
    const { client, tokens } = await setup();
    const other = await confidentialClient();
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
    const [idHeader, idPayload] = tokens.id_token.split(".");
    const cases = [
      () => revoke(client, "never-issued-token"),
      () => revoke(other, tokens.access_token),
      () => revoke(client, `${b64({ alg: "RS256", kid: "no-such-key" })}.${b64({ sub: "x" })}.sig`),
      () => revoke(client, `${idHeader}.${idPayload}.${Buffer.from("forged").toString("base64url")}`),
      () => revoke(client, tokens.id_token),
      () => revoke(client, tokens.access_token),
      () => revoke(client, tokens.refresh_token),
    ];
    for (const [i, send] of cases.entries()) {
      const res = await send();
      expect(res.status, `case ${i}: ${res.text}`).toBe(200);
      expect(res.text, `case ${i}`).toBe("");
    }
    expect((await userinfo(tokens.access_token)).status).toBe(401);
  });

  it("refuses a request without a token with 400 invalid_request", async () => {
    const { client } = await setup();
    expectOAuthError(await form("/api/auth/oauth2/revoke", {}, { authorization: client.auth }), 400, "invalid_request");
  });

  it("revoking a refresh token makes it unusable (and the access tokens from it); the session is untouched", async () => {
    const { person, client, tokens } = await setup();
    const res = await revoke(client, tokens.refresh_token, "refresh_token");
    expect(res.status, res.text).toBe(200);

    expectOAuthError(await refresh(client, tokens.refresh_token), 400, "invalid_grant");
    expect((await introspect(client, tokens.refresh_token)).json).toEqual({ active: false });
    // RFC 7009 §2.1: access tokens of the same grant go with it.
    expect((await userinfo(tokens.access_token)).status).toBe(401);
    // Revoking again is still a 200.
    expect((await revoke(client, tokens.refresh_token)).status).toBe(200);
    // A separate operation: the person is still signed in here.
    expect(await sessionUser(person.cookie)).toBe(person.user.id);
  });

  it("revoking an access token makes userinfo 401 and introspection inactive; the session is untouched", async () => {
    const { person, client, tokens } = await setup();
    expect((await userinfo(tokens.access_token)).status).toBe(200);
    const res = await revoke(client, tokens.access_token, "access_token");
    expect(res.status, res.text).toBe(200);

    const info = await userinfo(tokens.access_token);
    expectOAuthError(info, 401, "invalid_token");
    expect(info.headers.get("www-authenticate")).toMatch(/^Bearer\b/);
    expect((await introspect(client, tokens.access_token)).json).toEqual({ active: false });
    expect(await sessionUser(person.cookie)).toBe(person.user.id);
    // The app keeps its consent: authorizing again needs no new consent.
    expect((await authorizeStep(client, person.cookie)).origin).toBe(new URL(RP_REDIRECT).origin);
  });

  it("a client cannot revoke another client's tokens", async () => {
    const { client, tokens } = await setup();
    const other = await confidentialClient();
    expect((await revoke(other, tokens.refresh_token)).status).toBe(200);
    expect((await revoke(other, tokens.access_token)).status).toBe(200);
    expect((await introspect(client, tokens.refresh_token)).json.active).toBe(true);
    expect((await userinfo(tokens.access_token)).status).toBe(200);
    expect((await refresh(client, tokens.refresh_token)).status).toBe(200);
  });
});

describe("RP-initiated logout (GET /oauth2/end-session)", () => {
  it("registering post_logout_redirect_uris enables end-session: the ID token carries sid", async () => {
    const { tokens } = await setup();
    const claims = jwtPayload(tokens.id_token);
    expect(typeof claims.sid).toBe("string");
    expect(claims.sid.length).toBeGreaterThan(0);
  });

  it("with id_token_hint, a registered post_logout_redirect_uri and state: ends the session and redirects there with state", async () => {
    const { person, client, tokens } = await setup();
    const res = await navigate(
      `/api/auth/oauth2/end-session?${new URLSearchParams({ id_token_hint: tokens.id_token, post_logout_redirect_uri: RP_LOGGED_OUT, state: "af0ifjsldkj" })}`,
      person.cookie,
    );
    expect(res.status, res.body).toBe(302);
    const location = new URL(String(res.headers.location));
    expect(`${location.origin}${location.pathname}`).toBe(RP_LOGGED_OUT);
    expect(location.searchParams.get("state")).toBe("af0ifjsldkj");
    const cleared = ([] as string[]).concat(res.headers["set-cookie"] ?? []);
    expect(cleared.some((c) => /session_token=;/.test(c))).toBe(true);

    expect(await sessionUser(person.cookie)).toBeNull();
    // Ending the session is not revoking the app: the consent stays.
    const cookie = await signInAgain(person);
    const apps = await server.api("/api/authorized-apps", { cookie });
    expect(apps.json.apps.map((a: Json) => a.clientId)).toContain(client.client_id);
    expect((await authorizeStep(client, cookie)).origin).toBe(new URL(RP_REDIRECT).origin);
  });

  it("an RP's back end may end the session with the hint alone (no cookie); the JSON answer names the redirect", async () => {
    const { person, tokens } = await setup();
    const res = await server.api(`/api/auth/oauth2/end-session?${new URLSearchParams({ id_token_hint: tokens.id_token, post_logout_redirect_uri: RP_LOGGED_OUT, state: "s2" })}`);
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json\b/);
    expect(res.json).toEqual({ redirect: true, url: `${RP_LOGGED_OUT}?state=s2` });
    expect(await sessionUser(person.cookie)).toBeNull();
  });

  it("does not follow an unregistered post_logout_redirect_uri", async () => {
    const { person, tokens } = await setup();
    const res = await navigate(
      `/api/auth/oauth2/end-session?${new URLSearchParams({ id_token_hint: tokens.id_token, post_logout_redirect_uri: "https://evil.example/phish", state: "s3" })}`,
      person.cookie,
    );
    expect(res.status).toBe(200);
    expect(res.headers.location).toBeUndefined();
    expect(String(res.headers["content-type"])).toMatch(/^text\/html\b/);
    expect(res.body).not.toContain("evil.example");

    const api = await setup();
    const viaApi = await server.api(
      `/api/auth/oauth2/end-session?${new URLSearchParams({ id_token_hint: api.tokens.id_token, post_logout_redirect_uri: `${RP_LOGGED_OUT}/other`, state: "s4" })}`,
      { cookie: api.person.cookie },
    );
    expect(viaApi.status).toBeLessThan(300);
    expect(viaApi.headers.get("location")).toBeNull();
    expect(viaApi.text).not.toContain("/other");
  });

  it("refuses a forged id_token_hint and keeps the session", async () => {
    const { person, tokens } = await setup();
    const [h, p] = tokens.id_token.split(".");
    const forged = `${h}.${p}.${Buffer.from("not the signature").toString("base64url")}`;
    const res = await server.api(`/api/auth/oauth2/end-session?${new URLSearchParams({ id_token_hint: forged, post_logout_redirect_uri: RP_LOGGED_OUT })}`, {
      cookie: person.cookie,
    });
    expectOAuthError(res, 401, "invalid_token");
    expect(await sessionUser(person.cookie)).toBe(person.user.id);
  });
});

describe("authorized apps (/api/authorized-apps)", () => {
  it("lists the client after consent, and nothing for someone who authorized nothing", async () => {
    const { person, client } = await setup();
    const res = await server.api("/api/authorized-apps", { cookie: person.cookie });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json\b/);
    expect(res.headers.get("cache-control")).toContain("no-store");
    expect(res.json.apps).toHaveLength(1);
    const [app] = res.json.apps;
    expect(app).toMatchObject({ clientId: client.client_id, name: "Token Test RP" });
    expect(app.scopes).toEqual(expect.arrayContaining(["openid", "profile", "email", "offline_access"]));
    expect(new Date(app.authorizedAt).toISOString()).toBe(app.authorizedAt);

    const stranger = await signUp(server);
    const empty = await server.api("/api/authorized-apps", { cookie: stranger.cookie });
    expect(empty.status).toBe(200);
    expect(empty.json).toEqual({ apps: [] });
  });

  it("DELETE revokes the consent and every token the app holds; the next authorize asks again", async () => {
    const { person, client, tokens } = await setup();
    const second = await grant(person, client);
    // Consent is remembered until then.
    expect((await authorizeStep(client, person.cookie)).origin).toBe(new URL(RP_REDIRECT).origin);

    const res = await server.api(`/api/authorized-apps/${encodeURIComponent(client.client_id)}`, { method: "DELETE", cookie: person.cookie });
    expect(res.status, res.text).toBe(204);
    expect(res.text).toBe("");

    expect((await server.api("/api/authorized-apps", { cookie: person.cookie })).json.apps).toEqual([]);
    for (const t of [tokens, second]) {
      expectOAuthError(await refresh(client, t.refresh_token), 400, "invalid_grant");
      expectOAuthError(await userinfo(t.access_token), 401, "invalid_token");
      expect((await introspect(client, t.access_token)).json).toEqual({ active: false });
    }
    const next = await authorizeStep(client, person.cookie);
    expect(next.origin).toBe(server.url);
    expect(next.pathname).toBe("/consent");
    // Still signed in: revoking an app is not signing out.
    expect(await sessionUser(person.cookie)).toBe(person.user.id);
  });

  it("DELETE touches only the signed-in person's own authorization", async () => {
    const { person, client, tokens } = await setup();
    const other = await signUp(server);
    const res = await server.api(`/api/authorized-apps/${encodeURIComponent(client.client_id)}`, { method: "DELETE", cookie: other.cookie });
    expectProblem(res, 404);
    expect((await refresh(client, tokens.refresh_token)).status).toBe(200);
    expect((await server.api("/api/authorized-apps", { cookie: person.cookie })).json.apps).toHaveLength(1);
  });

  it("without a session both routes answer 401 problem details", async () => {
    const { client } = await setup();
    expectProblem(await server.api("/api/authorized-apps"), 401);
    expectProblem(await server.api(`/api/authorized-apps/${client.client_id}`, { method: "DELETE" }), 401);
    expectProblem(await server.api("/api/authorized-apps", { cookie: "better-auth.session_token=forged.value" }), 401);
  });

  it("accepts the session token as a bearer token, but not an OAuth access token (spec, Authentication rule 1)", async () => {
    const { person, client, tokens } = await setup();
    const bySession = await server.api("/api/authorized-apps", { headers: { authorization: `Bearer ${person.token}` } });
    expect(bySession.status).toBe(200);
    expect(bySession.json.apps.map((a: Json) => a.clientId)).toEqual([client.client_id]);
    expectProblem(await server.api("/api/authorized-apps", { headers: { authorization: `Bearer ${tokens.access_token}` } }), 401);
    expectProblem(await server.api(`/api/authorized-apps/${client.client_id}`, { method: "DELETE", headers: { authorization: `Bearer ${tokens.access_token}` } }), 401);
    expect((await userinfo(tokens.access_token)).status).toBe(200);
  });

  it("sign-in hands out the session token in set-auth-token (for bearer use); a plain get-session sets nothing", async () => {
    const person = await signUp(server);
    const res = await fetch(server.url + "/api/auth/sign-in/email", {
      method: "POST",
      headers: { "content-type": "application/json", origin: server.url },
      body: JSON.stringify({ email: person.email, password: person.password }),
    });
    expect(res.status).toBe(200);
    const bearer = res.headers.get("set-auth-token");
    expect(bearer).toBeTruthy();
    expect(res.headers.get("access-control-expose-headers") ?? "").toContain("set-auth-token");
    expect((await server.api("/api/authorized-apps", { headers: { authorization: `Bearer ${bearer}` } })).status).toBe(200);
    const session = await fetch(server.url + "/api/auth/get-session", { headers: { authorization: `Bearer ${bearer}` } });
    expect(session.status).toBe(200);
    expect(((await session.json()) as Json).user.id).toBe(person.user.id);
    expect(session.headers.get("set-auth-jwt")).toBeNull();
  });
});

describe("the four operations stay separate", () => {
  it("signing out of this service keeps the app's consent and its offline_access refresh token", async () => {
    const { person, client, tokens } = await setup();
    const out = await server.api("/api/auth/sign-out", { cookie: person.cookie, body: {} });
    expect(out.json).toEqual({ success: true });
    expect(await sessionUser(person.cookie)).toBeNull();

    const refreshed = await refresh(client, tokens.refresh_token);
    expect(refreshed.status, refreshed.text).toBe(200);
    expect((await userinfo(refreshed.json.access_token)).status).toBe(200);

    const cookie = await signInAgain(person);
    expect((await server.api("/api/authorized-apps", { cookie })).json.apps.map((a: Json) => a.clientId)).toEqual([client.client_id]);
    expect((await authorizeStep(client, cookie)).origin).toBe(new URL(RP_REDIRECT).origin);
  });

  it("revoking one app leaves another app's tokens and consent alone", async () => {
    const { person, client, tokens } = await setup();
    const otherClient = await confidentialClient({ client_name: "Other RP" });
    const otherTokens = await grant(person, otherClient);
    const res = await server.api(`/api/authorized-apps/${encodeURIComponent(client.client_id)}`, { method: "DELETE", cookie: person.cookie });
    expect(res.status).toBe(204);
    expectOAuthError(await refresh(client, tokens.refresh_token), 400, "invalid_grant");
    expect((await userinfo(otherTokens.access_token)).status).toBe(200);
    expect((await refresh(otherClient, otherTokens.refresh_token)).status).toBe(200);
    expect((await server.api("/api/authorized-apps", { cookie: person.cookie })).json.apps.map((a: Json) => a.clientId)).toEqual([otherClient.client_id]);
  });
});

describe("a password reset ends the OAuth grants too (KEEP_OAUTH_GRANTS_ON_PASSWORD_RESET=false)", () => {
  /** Asks for a reset link by mail and sets a new password with it. */
  async function resetPassword(on: TestServer, email: string) {
    const asked = await on.api("/api/auth/request-password-reset", { body: { email, redirectTo: "/reset-password" } });
    expect(asked.status, asked.text).toBe(200);
    const link = linkIn(await box.latest(email, /reset/i));
    const resetToken = link.pathname.split("/").at(-1)!;
    const res = await on.api("/api/auth/reset-password", { body: { token: resetToken, newPassword: "a brand new password 42" } });
    expect(res.status, res.text).toBe(200);
  }

  it("revokes the refresh token (invalid_grant) and the access token (introspection inactive)", async () => {
    const { person, client, tokens } = await setup();
    expect((await introspect(client, tokens.access_token)).json.active).toBe(true);
    await resetPassword(server, person.email);
    expectOAuthError(await refresh(client, tokens.refresh_token), 400, "invalid_grant");
    const seen = await introspect(client, tokens.access_token);
    expect(seen.status).toBe(200);
    expect(seen.json).toEqual({ active: false });
    expect((await userinfo(tokens.access_token)).status).toBe(401);
  });

  it("KEEP_OAUTH_GRANTS_ON_PASSWORD_RESET=true keeps the refresh token", async () => {
    const person = await signUp(keeping);
    const client = await registerClient(keeping, { application_type: "web", token_endpoint_auth_method: "client_secret_basic", redirect_uris: [RP_REDIRECT] });
    const auth = basicAuth(client.client_id, client.client_secret!);
    const { verifier, challenge } = pkce();
    const code = (await authorize(keeping, { clientId: client.client_id, cookie: person.cookie, challenge, redirectUri: RP_REDIRECT })).code!;
    const tokens = (await token(keeping, { grant_type: "authorization_code", code, redirect_uri: RP_REDIRECT, code_verifier: verifier }, { authorization: auth })).json;
    await resetPassword(keeping, person.email);
    const refreshed = await token(keeping, { grant_type: "refresh_token", refresh_token: tokens.refresh_token }, { authorization: auth });
    expect(refreshed.status, refreshed.text).toBe(200);
  });
});
