import { randomUUID } from "node:crypto";
import { exportJWK, generateKeyPair } from "jose";
import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestServer } from "../helpers/fixtures.js";
import { authorizeUrl, pkce, REDIRECT, registerClient, signUp } from "../helpers/oauth.js";
import { postForm, startTestServer, type TestServer } from "../helpers/server.js";

/**
 * RFC 9126 pushed authorization requests, driven by a published client (openid-client's
 * buildAuthorizationUrlWithPAR) where it has a function for it, and by plain HTTP for what a
 * well-behaved client never sends.
 */
const server = useTestServer({ PAR_REQUEST_URI_TTL: "2" });
const insecure = { execute: [oidc.allowInsecureRequests] };
const SCOPE = "openid profile offline_access";

async function discover(s: TestServer, client: { client_id: string; client_secret?: string }, auth: oidc.ClientAuth = oidc.None()) {
  return oidc.discovery(new URL(s.url), client.client_id, client.client_secret ? { client_secret: client.client_secret } : undefined, auth, insecure);
}

/** Where the browser is sent next by the authorize endpoint or a step after it. */
function next(res: { status: number; headers: Headers; json: any }): string | null {
  if (res.status >= 300 && res.status < 400) return res.headers.get("location");
  return typeof res.json?.url === "string" ? res.json.url : null;
}

/** A signed-in person's browser following an authorization URL: consent (Allow), then back at the app. */
async function follow(s: TestServer, url: URL, cookie: string): Promise<URL> {
  let res = await s.api(`${url.pathname}${url.search}`, { cookie });
  let location = next(res);
  if (location?.startsWith("/consent")) {
    res = await s.api("/api/auth/oauth2/consent", { cookie, body: { accept: true, oauth_query: new URL(location, s.url).search.slice(1) } });
    location = next(res);
  }
  if (!location) throw new Error(`no redirect: ${res.status} ${res.text}`);
  return new URL(location, s.url);
}

/** openid-client pushes the request (PKCE, state), the person allows, openid-client redeems the code. */
async function pushedCodeFlow(s: TestServer, config: oidc.Configuration, cookie: string) {
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const url = await oidc.buildAuthorizationUrlWithPAR(config, { redirect_uri: REDIRECT, scope: "openid", code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: "S256", state });
  expect([...url.searchParams.keys()].sort()).toEqual(["client_id", "request_uri"]);
  return oidc.authorizationCodeGrant(config, await follow(s, url, cookie), { pkceCodeVerifier: verifier, expectedState: state });
}

async function pushedRequest(s: TestServer, fields: Record<string, string>, headers: Record<string, string> = {}) {
  return postForm(s, "/api/auth/oauth2/par", fields, headers);
}

function requestFields(clientId: string, extra: Record<string, string> = {}) {
  const { challenge } = pkce();
  return { client_id: clientId, response_type: "code", redirect_uri: REDIRECT, scope: "openid", code_challenge: challenge, code_challenge_method: "S256", state: "s1", ...extra };
}

describe("pushed authorization requests (RFC 9126)", () => {
  it("discovery names the endpoint and says pushing is not required", async () => {
    const res = await server.api("/.well-known/oauth-authorization-server");
    expect(res.json.pushed_authorization_request_endpoint).toBe(`${server.url}/api/auth/oauth2/par`);
    expect(res.json.require_pushed_authorization_requests).toBe(false);
    const oidcMeta = await server.api("/.well-known/openid-configuration");
    expect(oidcMeta.json.pushed_authorization_request_endpoint).toBe(`${server.url}/api/auth/oauth2/par`);
  });

  it("openid-client pushes a public client's request, and the code flow completes from the request_uri", async () => {
    const person = await signUp(server);
    const client = await registerClient(server);
    const config = await discover(server, client);
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const url = await oidc.buildAuthorizationUrlWithPAR(config, {
      redirect_uri: REDIRECT,
      scope: SCOPE,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
      state,
      nonce,
    });
    // The browser carries the reference only.
    expect([...url.searchParams.keys()].sort()).toEqual(["client_id", "request_uri"]);
    expect(url.searchParams.get("request_uri")).toMatch(/^urn:ietf:params:oauth:request_uri:[A-Za-z0-9]{43}$/);
    const back = await follow(server, url, person.cookie);
    const tokens = await oidc.authorizationCodeGrant(config, back, { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true });
    expect(tokens.access_token).toBeTruthy();
    expect(tokens.claims()?.sub).toBe(person.user.id);
    expect(tokens.scope).toBe(SCOPE);
  });

  it("a confidential client authenticates at the endpoint as at the token endpoint (client_secret_basic)", async () => {
    const person = await signUp(server);
    const client = await registerClient(server, { application_type: "web", token_endpoint_auth_method: "client_secret_basic" });
    const config = await discover(server, client, oidc.ClientSecretBasic(client.client_secret!));
    const tokens = await pushedCodeFlow(server, config, person.cookie);
    expect(tokens.access_token).toBeTruthy();
  });

  it("a private_key_jwt client authenticates at the endpoint with openid-client's PrivateKeyJwt", async () => {
    const person = await signUp(server);
    const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
    const kid = randomUUID();
    const client = await registerClient(server, {
      application_type: "web",
      token_endpoint_auth_method: "private_key_jwt",
      jwks: { keys: [{ ...(await exportJWK(publicKey)), kid, alg: "ES256", use: "sig" }] },
    });
    const config = await discover(server, client, oidc.PrivateKeyJwt({ key: privateKey, kid }));
    const tokens = await pushedCodeFlow(server, config, person.cookie);
    expect(tokens.access_token).toBeTruthy();
    // Without an assertion the same client is refused.
    const bare = await pushedRequest(server, requestFields(client.client_id));
    expect(bare.json.error).toBe("invalid_client");
  });

  it("answers 201 with a short-lived request_uri, not cached", async () => {
    const client = await registerClient(server);
    const res = await pushedRequest(server, requestFields(client.client_id));
    expect(res.status, res.text).toBe(201);
    expect(res.headers.get("cache-control")).toContain("no-store");
    expect(res.json.expires_in).toBe(2);
    expect(res.json.request_uri).toMatch(/^urn:ietf:params:oauth:request_uri:/);
  });

  it("refuses a client that does not authenticate, or a wrong secret, as the token endpoint does", async () => {
    const client = await registerClient(server, { application_type: "web", token_endpoint_auth_method: "client_secret_basic" });
    const none = await pushedRequest(server, requestFields(client.client_id));
    const atToken = await postForm(server, "/api/auth/oauth2/token", { grant_type: "authorization_code", code: "x", redirect_uri: REDIRECT, client_id: client.client_id });
    expect(none.status).toBe(atToken.status);
    expect(none.status).toBe(400);
    expect(none.json.error).toBe("invalid_client");
    const badBasic = { authorization: `Basic ${Buffer.from(`${client.client_id}:not-the-secret`).toString("base64")}` };
    const wrong = await pushedRequest(server, requestFields(client.client_id), badBasic);
    const wrongAtToken = await postForm(server, "/api/auth/oauth2/token", { grant_type: "authorization_code", code: "x", redirect_uri: REDIRECT }, badBasic);
    expect(wrong.status).toBe(wrongAtToken.status);
    expect(wrong.status).toBe(401);
    expect(wrong.json.error).toBe("invalid_client");
    const unknown = await pushedRequest(server, requestFields("no-such-client"));
    expect(unknown.status).toBe(400);
    expect(unknown.json.error).toBe("invalid_client");
  });

  it("checks the request as the authorization endpoint would, at push time", async () => {
    const client = await registerClient(server);
    const cases: Array<[Record<string, string>, string]> = [
      [{ redirect_uri: "http://127.0.0.1:9999/elsewhere" }, "invalid_request"],
      [{ response_type: "token" }, "unsupported_response_type"],
      [{ scope: "openid admin:everything" }, "invalid_scope"],
      [{ code_challenge_method: "plain" }, "invalid_request"],
      [{ resource: "https://api.example/v1#frag" }, "invalid_target"],
      [{ request_uri: "urn:ietf:params:oauth:request_uri:abc" }, "invalid_request"],
      [{ authorization_details: "not json" }, "invalid_authorization_details"],
    ];
    for (const [change, error] of cases) {
      const res = await pushedRequest(server, requestFields(client.client_id, change));
      expect(res.status, JSON.stringify(change)).toBe(400);
      expect(res.json.error, JSON.stringify(change)).toBe(error);
    }
    // A public client must use PKCE.
    const { code_challenge: _c, code_challenge_method: _m, ...withoutPkce } = requestFields(client.client_id);
    const res = await pushedRequest(server, withoutPkce);
    expect(res.status).toBe(400);
    expect(res.json.error).toBe("invalid_request");
  });

  it("a request_uri works once", async () => {
    const person = await signUp(server);
    const client = await registerClient(server);
    const pushed = await pushedRequest(server, requestFields(client.client_id));
    const path = authorizeUrl(server, { client_id: client.client_id, request_uri: pushed.json.request_uri });
    const first = await follow(server, new URL(path, server.url), person.cookie);
    expect(first.searchParams.get("code")).toBeTruthy();
    expect(first.searchParams.get("state")).toBe("s1");
    const again = await server.api(path, { cookie: person.cookie });
    const location = new URL(next(again)!, server.url);
    expect(location.pathname).toBe("/error");
    expect(location.searchParams.get("error")).toBe("invalid_request_uri");
  });

  it("an expired request_uri is refused", async () => {
    const person = await signUp(server);
    const client = await registerClient(server);
    const pushed = await pushedRequest(server, requestFields(client.client_id));
    await new Promise((r) => setTimeout(r, 2500));
    const res = await server.api(authorizeUrl(server, { client_id: client.client_id, request_uri: pushed.json.request_uri }), { cookie: person.cookie });
    expect(new URL(next(res)!, server.url).searchParams.get("error")).toBe("invalid_request_uri");
  });

  it("a request_uri is for the client that pushed it only", async () => {
    const person = await signUp(server);
    const owner = await registerClient(server);
    const other = await registerClient(server);
    const pushed = await pushedRequest(server, requestFields(owner.client_id));
    const res = await server.api(authorizeUrl(server, { client_id: other.client_id, request_uri: pushed.json.request_uri }), { cookie: person.cookie });
    expect(new URL(next(res)!, server.url).searchParams.get("error")).toBe("invalid_request_uri");
  });

  it("parameters beside request_uri are ignored: the pushed ones count", async () => {
    const person = await signUp(server);
    const client = await registerClient(server, { redirect_uris: [REDIRECT, "http://127.0.0.1:9999/other"] });
    const pushed = await pushedRequest(server, requestFields(client.client_id, { state: "pushed" }));
    const url = new URL(authorizeUrl(server, { client_id: client.client_id, request_uri: pushed.json.request_uri, redirect_uri: "http://127.0.0.1:9999/other", state: "tampered" }), server.url);
    const back = await follow(server, url, person.cookie);
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
    expect(back.searchParams.get("state")).toBe("pushed");
  });

  it("a client registered with require_pushed_authorization_requests must push", async () => {
    const person = await signUp(server);
    const client = await registerClient(server, { require_pushed_authorization_requests: true });
    expect(client.require_pushed_authorization_requests).toBe(true);
    const { code_challenge } = requestFields(client.client_id);
    const direct = await server.api(authorizeUrl(server, { ...requestFields(client.client_id), code_challenge }), { cookie: person.cookie });
    const refused = new URL(next(direct)!, server.url);
    expect(refused.pathname).toBe("/error");
    expect(refused.searchParams.get("error")).toBe("invalid_request");
    const pushed = await pushedRequest(server, requestFields(client.client_id));
    const back = await follow(server, new URL(authorizeUrl(server, { client_id: client.client_id, request_uri: pushed.json.request_uri }), server.url), person.cookie);
    expect(back.searchParams.get("code")).toBeTruthy();
    // RFC 7592: the client reads it back, and cannot switch it off by an update.
    const management = { authorization: `Bearer ${client.registration_access_token}` };
    const read = await server.api(new URL(client.registration_client_uri as string).pathname, { headers: management });
    expect(read.json.require_pushed_authorization_requests).toBe(true);
    const { registration_access_token: _t, registration_client_uri: _u, ...info } = read.json;
    const kept = await server.api(new URL(client.registration_client_uri as string).pathname, { method: "PUT", headers: { ...management, authorization: `Bearer ${read.json.registration_access_token}` }, body: info });
    expect(kept.status, kept.text).toBe(200);
    expect(kept.json.require_pushed_authorization_requests).toBe(true);
    const off = await server.api(new URL(client.registration_client_uri as string).pathname, { method: "PUT", headers: { authorization: `Bearer ${kept.json.registration_access_token}` }, body: { ...info, require_pushed_authorization_requests: false } });
    expect(off.status).toBe(400);
    expect(off.json.error).toBe("invalid_client_metadata");
    // Another client is not affected.
    const free = await registerClient(server);
    const open = await follow(server, new URL(authorizeUrl(server, requestFields(free.client_id)), server.url), person.cookie);
    expect(open.searchParams.get("code")).toBeTruthy();
  });

  it("refuses a registration field that is not a boolean", async () => {
    const res = await server.api("/api/auth/oauth2/register", {
      body: { client_name: "x", application_type: "native", redirect_uris: [REDIRECT], token_endpoint_auth_method: "none", require_pushed_authorization_requests: "yes" },
    });
    expect(res.status).toBe(400);
    expect(res.json.error).toBe("invalid_client_metadata");
  });
});

describe("REQUIRE_PUSHED_AUTHORIZATION_REQUESTS", () => {
  const strict = useTestServer({ REQUIRE_PUSHED_AUTHORIZATION_REQUESTS: "true" });

  it("discovery says so, and a request that was not pushed is refused", async () => {
    const meta = await strict.api("/.well-known/oauth-authorization-server");
    expect(meta.json.require_pushed_authorization_requests).toBe(true);
    const person = await signUp(strict);
    const client = await registerClient(strict);
    const direct = await strict.api(authorizeUrl(strict, requestFields(client.client_id)), { cookie: person.cookie });
    expect(new URL(next(direct)!, strict.url).searchParams.get("error")).toBe("invalid_request");
    const tokens = await pushedCodeFlow(strict, await discover(strict, client), person.cookie);
    expect(tokens.access_token).toBeTruthy();
  });
});

describe.runIf(Boolean(process.env.TEST_REDIS_URL))("a pushed request on several instances sharing Redis", () => {
  let a: TestServer;
  let b: TestServer;
  beforeAll(async () => {
    a = await startTestServer({ REDIS_URL: process.env.TEST_REDIS_URL! });
    const database = a.config.database;
    const second = await startTestServer({ REDIS_URL: process.env.TEST_REDIS_URL!, AUTH_URL: a.url, PORT: "0", DATABASE_URL: database.kind === "sqlite" ? database.file : database.url });
    b = { ...second, url: second.local.url, api: second.local.api, close: second.close };
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it("is pushed to one instance, redeemed at the other, and then refused at both", async () => {
    const person = await signUp(a);
    const client = await registerClient(a);
    const pushed = await pushedRequest(a, requestFields(client.client_id));
    expect(pushed.status).toBe(201);
    const path = authorizeUrl(a, { client_id: client.client_id, request_uri: pushed.json.request_uri });
    const back = await follow(b, new URL(path, b.url), person.cookie);
    expect(back.searchParams.get("code")).toBeTruthy();
    for (const instance of [a, b]) {
      const again = await instance.api(path, { cookie: person.cookie });
      expect(new URL(next(again)!, instance.url).searchParams.get("error")).toBe("invalid_request_uri");
    }
  });
});
