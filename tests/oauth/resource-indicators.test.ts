import { randomUUID } from "node:crypto";
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from "jose";
import { describe, expect, it } from "vitest";
import { canonicalResource } from "../../plugins/resource-policy/index.js";
import { useTestServer } from "../helpers/fixtures.js";
import { authorizationRequest, authorizeUrl, pkce, REDIRECT, registerClient, signUp, token } from "../helpers/oauth.js";
import { postForm, type TestServer } from "../helpers/server.js";

const server = useTestServer();
const API = "https://api.example/v1";
const OTHER = "https://other.example/";

/** Authorize with any number of `resource` parameters, accept consent, answer where the browser lands. */
async function authorizeFor(target: TestServer, clientId: string, cookie: string, resources: string[], scope = "openid profile offline_access") {
  const { verifier, challenge } = pkce();
  const { params } = authorizationRequest(target, clientId, { scope, extra: { code_challenge: challenge } });
  const query = new URLSearchParams(params);
  for (const r of resources) query.append("resource", r);
  let res = await target.api(`/api/auth/oauth2/authorize?${query}`, { cookie });
  let location = next(res);
  let consentQuery: string | null = null;
  if (location?.startsWith("/consent")) {
    consentQuery = new URL(location, target.url).search.slice(1);
    res = await target.api("/api/auth/oauth2/consent", { cookie, body: { accept: true, oauth_query: consentQuery } });
    location = next(res);
  }
  if (!location) throw new Error(`authorize did not redirect: ${res.status} ${res.text}`);
  const url = new URL(location, target.url);
  return { url, code: url.searchParams.get("code"), verifier, consentQuery };
}

/** Where an endpoint sends the browser: a redirect, or better-auth's JSON `{ redirect, url }`. */
const next = (res: { status: number; headers: Headers; json: any }): string | null =>
  res.status >= 300 && res.status < 400 ? res.headers.get("location") : typeof res.json?.url === "string" ? res.json.url : null;

async function setUp(target: TestServer, resources: string[], scope?: string) {
  const person = await signUp(target);
  const client = await registerClient(target);
  const auth = await authorizeFor(target, client.client_id, person.cookie, resources, scope);
  return { person, client, auth };
}

const exchange = (target: TestServer, clientId: string, auth: { code: string | null; verifier: string }, resource?: string) =>
  token(target, { grant_type: "authorization_code", code: auth.code!, redirect_uri: REDIRECT, client_id: clientId, code_verifier: auth.verifier, ...(resource ? { resource } : {}) });

const refresh = (target: TestServer, clientId: string, refreshToken: string, resource?: string) =>
  token(target, { grant_type: "refresh_token", refresh_token: refreshToken, client_id: clientId, ...(resource ? { resource } : {}) });

async function verifyFor(target: TestServer, accessToken: string, audience: string) {
  const jwks = createLocalJWKSet((await target.api("/api/auth/jwks")).json);
  return jwtVerify(accessToken, jwks, { issuer: target.url, audience, typ: "at+jwt" });
}

describe("resource indicators (RFC 8707)", () => {
  it("canonical spelling: lower-case scheme and host, no default port, no fragment; an origin with or without its slash", () => {
    expect(canonicalResource("https://api.example/v1")).toBe("https://api.example/v1");
    expect(canonicalResource("HTTPS://API.Example/v1")).toBe("https://api.example/v1");
    expect(canonicalResource("https://api.example:443/v1/")).toBe("https://api.example/v1/");
    expect(canonicalResource("https://api.example")).toBe("https://api.example");
    expect(canonicalResource("https://api.example/")).toBe("https://api.example/");
    expect(canonicalResource("https://api.example/v1#x")).toBeNull();
    expect(canonicalResource("https://user@api.example/")).toBeNull();
    expect(canonicalResource("not a url")).toBeNull();
  });

  it("any https resource the person consents to: a JWT access token for it (RFC 9068), checked with jose against the JWKS", async () => {
    const { person, client, auth } = await setUp(server, [API]);
    expect(auth.code, auth.url.href).toBeTruthy();
    const res = await exchange(server, client.client_id, auth, API);
    expect(res.status, res.text).toBe(200);
    const accessToken = res.json.access_token as string;
    expect(decodeProtectedHeader(accessToken).typ).toBe("at+jwt");
    const { payload } = await verifyFor(server, accessToken, API);
    expect(payload).toMatchObject({ sub: person.user.id, client_id: client.client_id, scope: expect.stringContaining("openid"), jti: expect.any(String) });
    expect(payload.exp! - payload.iat!).toBeLessThanOrEqual(server.config.ttl.accessToken);
    // A resource server elsewhere refuses it: its aud is not that server's.
    await expect(verifyFor(server, accessToken, OTHER)).rejects.toThrow();
  });

  it("the consent step names the resource; a second resource asks again", async () => {
    const person = await signUp(server);
    const client = await registerClient(server);
    const first = await authorizeFor(server, client.client_id, person.cookie, [API]);
    expect(first.consentQuery).toContain(encodeURIComponent(API));
    const again = await authorizeFor(server, client.client_id, person.cookie, [API]);
    expect(again.consentQuery).toBeNull();
    expect(again.code).toBeTruthy();
    const wider = await authorizeFor(server, client.client_id, person.cookie, [API, OTHER]);
    expect(wider.consentQuery).not.toBeNull();
  });

  it("refuses a resource that is not https, or not written canonically, with invalid_target", async () => {
    const person = await signUp(server);
    const client = await registerClient(server);
    for (const resource of ["http://api.example/v1", "urn:example:api", "HTTPS://API.example/v1"]) {
      const auth = await authorizeFor(server, client.client_id, person.cookie, [resource]);
      expect(auth.url.searchParams.get("error"), resource).toBe("invalid_target");
      expect(auth.url.searchParams.get("iss")).toBe(server.url);
    }
    const canonical = await authorizeFor(server, client.client_id, person.cookie, ["HTTPS://API.example/v1"]);
    expect(canonical.url.searchParams.get("error_description")).toContain(API);
  });

  it("several resources at authorize: one access token per resource at the token endpoint, each with its own aud", async () => {
    const { person, client, auth: refusedAuth } = await setUp(server, [API, OTHER]);
    // RFC 8707 §2.2: one resource per token request; several at once, or none when several were authorized, is refused.
    const body = new URLSearchParams({ grant_type: "authorization_code", code: refusedAuth.code!, redirect_uri: REDIRECT, client_id: client.client_id, code_verifier: refusedAuth.verifier });
    body.append("resource", API);
    body.append("resource", OTHER);
    const refused = await fetch(`${server.url}/api/auth/oauth2/token`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body });
    expect(refused.status).toBe(400);
    expect((await refused.json()).error).toBe("invalid_target");
    // (The refused exchange used its code up; the grant was consented to, so a new code comes at once.)
    const auth = await authorizeFor(server, client.client_id, person.cookie, [API, OTHER]);
    expect(auth.consentQuery).toBeNull();
    const unnamed = await exchange(server, client.client_id, await authorizeFor(server, client.client_id, person.cookie, [API, OTHER]));
    expect(unnamed.status).toBe(400);
    expect(unnamed.json.error).toBe("invalid_target");

    const first = await exchange(server, client.client_id, auth, API);
    expect(first.status, first.text).toBe(200);
    expect((await verifyFor(server, first.json.access_token, API)).payload.aud).not.toContain(OTHER);
    // The refresh token covers every authorized resource: the second token comes from it.
    const second = await refresh(server, client.client_id, first.json.refresh_token, OTHER);
    expect(second.status, second.text).toBe(200);
    const { payload } = await verifyFor(server, second.json.access_token, OTHER);
    expect(payload.aud).not.toContain(API);
    const noneNamed = await refresh(server, client.client_id, second.json.refresh_token);
    expect(noneNamed.status).toBe(400);
    expect(noneNamed.json.error).toBe("invalid_target");
  });

  it("a refresh may narrow to an authorized resource, never widen to another", async () => {
    const { client, auth } = await setUp(server, [API]);
    const tokens = await exchange(server, client.client_id, auth, API);
    expect(tokens.status, tokens.text).toBe(200);
    const widened = await refresh(server, client.client_id, tokens.json.refresh_token, OTHER);
    expect(widened.status).toBe(400);
    expect(widened.json.error).toBe("invalid_target");
    const same = await refresh(server, client.client_id, tokens.json.refresh_token, API);
    expect(same.status, same.text).toBe(200);
    await verifyFor(server, same.json.access_token, API);
    // Without `resource`, the refresh keeps the one authorized resource.
    const kept = await refresh(server, client.client_id, same.json.refresh_token);
    expect(kept.status, kept.text).toBe(200);
    await verifyFor(server, kept.json.access_token, API);
  });

  it("a code exchange cannot name a resource that was not authorized", async () => {
    const { client, auth } = await setUp(server, [API]);
    const res = await exchange(server, client.client_id, auth, OTHER);
    expect(res.status).toBe(400);
    expect(res.json.error).toBe("invalid_target");
  });

  it("introspection reports the aud of a token for an https resource", async () => {
    const person = await signUp(server);
    const client = await registerClient(server, { application_type: "web", redirect_uris: ["https://app.example/cb"], token_endpoint_auth_method: "client_secret_basic" });
    const { verifier, challenge } = pkce();
    const { params } = authorizationRequest(server, client.client_id, { redirectUri: "https://app.example/cb", scope: "openid", extra: { code_challenge: challenge, resource: API } });
    let res = await server.api(authorizeUrl(server, params), { cookie: person.cookie });
    const consent = new URL(next(res)!, server.url).search.slice(1);
    res = await server.api("/api/auth/oauth2/consent", { cookie: person.cookie, body: { accept: true, oauth_query: consent } });
    const code = new URL(next(res)!).searchParams.get("code")!;
    const basic = { authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString("base64")}` };
    const tokens = await token(server, { grant_type: "authorization_code", code, redirect_uri: "https://app.example/cb", code_verifier: verifier, resource: API }, basic);
    expect(tokens.status, tokens.text).toBe(200);
    const intro = await postForm(server, "/api/auth/oauth2/introspect", { token: tokens.json.access_token }, basic);
    expect(intro.json.active).toBe(true);
    expect([intro.json.aud].flat()).toContain(API);
  });

  it("a client with an allow-list may ask only for its resources and ours", async () => {
    const person = await signUp(server);
    const client = await registerClient(server);
    const now = new Date();
    // Its own resource: on PostgreSQL the database outlives this file.
    const listedApi = `https://api-${randomUUID().slice(0, 8)}.example/v1`;
    await server.db.insertInto("oauthResource").values({ id: randomUUID(), identifier: listedApi, name: "API", disabled: false, policyVersion: 1, createdAt: now, updatedAt: now }).execute();
    await server.db.insertInto("oauthClientResource").values({ id: randomUUID(), clientId: client.client_id, resourceId: listedApi, createdAt: now }).execute();
    const listed = await authorizeFor(server, client.client_id, person.cookie, [listedApi]);
    expect(listed.code, listed.url.href).toBeTruthy();
    const unlisted = await authorizeFor(server, client.client_id, person.cookie, [OTHER]);
    expect(unlisted.url.searchParams.get("error")).toBe("invalid_target");
    const ours = await authorizeFor(server, client.client_id, person.cookie, [`${server.url}/mcp`]);
    expect(ours.code, ours.url.href).toBeTruthy();
    // Another client without an allow-list is not bound by it.
    const open = await setUp(server, [OTHER]);
    expect(open.auth.code).toBeTruthy();
  });

  it("a code for no resource cannot be exchanged for one: naming a resource at the token endpoint is invalid_target", async () => {
    // The person consented to `openid offline_access` and no resource; a resource named only at
    // the token endpoint would get a JWT for an audience the consent page never showed.
    const { person, client, auth } = await setUp(server, [], "openid offline_access");
    const widened = await exchange(server, client.client_id, auth, API);
    expect(widened.status).toBe(400);
    expect(widened.headers.get("content-type")).toContain("application/json");
    expect(widened.json.error).toBe("invalid_target");
    // Checked once the client and the code are: a wrong verifier is still invalid_grant.
    const again = await authorizeFor(server, client.client_id, person.cookie, [], "openid offline_access");
    const wrongVerifier = await exchange(server, client.client_id, { code: again.code, verifier: pkce().verifier }, API);
    expect(wrongVerifier.status).toBe(400);
    expect(wrongVerifier.json.error).toBe("invalid_grant");
  });

  it("a refresh token for no resource cannot be refreshed into one: invalid_target, and the token stays good for what was granted", async () => {
    const { client, auth } = await setUp(server, [], "openid offline_access");
    const tokens = await exchange(server, client.client_id, auth);
    expect(tokens.status, tokens.text).toBe(200);
    const widened = await refresh(server, client.client_id, tokens.json.refresh_token, API);
    expect(widened.status).toBe(400);
    expect(widened.json.error).toBe("invalid_target");
    // Our own resources are resources too: the grant was for none.
    expect((await refresh(server, client.client_id, tokens.json.refresh_token, `${server.url}/mcp`)).json.error).toBe("invalid_target");
    // The refusals spent nothing: the refresh token still works, for what was granted (an opaque token).
    const plain = await refresh(server, client.client_id, tokens.json.refresh_token);
    expect(plain.status, plain.text).toBe(200);
    expect((plain.json.access_token as string).split(".")).toHaveLength(1);
  });

  it("the aud of a resource's JWT is that resource alone, with openid in the scope too (RFC 9068 §3)", async () => {
    const { client, auth } = await setUp(server, [API], "openid profile");
    const res = await exchange(server, client.client_id, auth, API);
    expect(res.status, res.text).toBe(200);
    const { payload } = await verifyFor(server, res.json.access_token, API);
    expect(payload.aud).toBe(API);
    expect(payload.scope).toBe("openid profile");
    expect(typeof res.json.id_token).toBe("string");
  });

  it("userinfo takes a token for itself (opaque, or a JWT for its audience), not a token for another resource", async () => {
    const userInfo = `${server.url}/api/auth/oauth2/userinfo`;
    const call = (accessToken: string) => server.api("/api/auth/oauth2/userinfo", { headers: { authorization: `Bearer ${accessToken}` } });
    const { person, client, auth } = await setUp(server, [API, userInfo]);
    const forApi = await exchange(server, client.client_id, auth, API);
    expect(forApi.status, forApi.text).toBe(200);
    const refused = await call(forApi.json.access_token);
    expect(refused.status).toBe(401);
    expect(refused.json.error).toBe("invalid_token");
    expect(refused.headers.get("www-authenticate")).toContain("invalid_token");
    // The same grant names userinfo as its other resource: a JWT for that audience is accepted.
    const forUserInfo = await refresh(server, client.client_id, forApi.json.refresh_token, userInfo);
    expect(forUserInfo.status, forUserInfo.text).toBe(200);
    expect((await verifyFor(server, forUserInfo.json.access_token, userInfo)).payload.aud).toBe(userInfo);
    const answered = await call(forUserInfo.json.access_token);
    expect(answered.status, answered.text).toBe(200);
    expect(answered.json.sub).toBe(person.user.id);
    // The scoped claims are released for it too (plugins/claims-policy checks the same audience).
    expect(answered.json.name).toBe("Test Person");
    // Our MCP server's token is not for userinfo either.
    const mcp = await setUp(server, [`${server.url}/mcp`]);
    const forMcp = await exchange(server, mcp.client.client_id, mcp.auth, `${server.url}/mcp`);
    expect((await call(forMcp.json.access_token)).status).toBe(401);
    // A grant without resource: an opaque token, for us, and userinfo answers it.
    const plain = await setUp(server, []);
    expect((await call((await exchange(server, plain.client.client_id, plain.auth)).json.access_token)).status).toBe(200);
  });

  it("our own routes take a token for us, not a JWT for another resource carrying the same scope (RFC 9068 §4)", async () => {
    const status = (accessToken: string) => server.api("/api/backup/status", { headers: { authorization: `Bearer ${accessToken}` } });
    const scope = "openid backup:read offline_access";
    const person = await signUp(server);
    const client = await registerClient(server, { scope });
    // A token the person granted to api.example: a resource server there could replay it here.
    const forApi = await authorizeFor(server, client.client_id, person.cookie, [API], scope);
    const apiToken = await exchange(server, client.client_id, forApi, API);
    expect(apiToken.status, apiToken.text).toBe(200);
    expect((await verifyFor(server, apiToken.json.access_token, API)).payload.scope).toContain("backup:read");
    const refused = await status(apiToken.json.access_token);
    expect(refused.status, refused.text).toBe(401);
    // The same grant of scopes without a resource: an opaque token for us, and the route answers it.
    const plain = await authorizeFor(server, client.client_id, person.cookie, [], scope);
    const ours = await exchange(server, client.client_id, plain);
    expect(ours.status, ours.text).toBe(200);
    expect((await status(ours.json.access_token)).status).toBe(200);
  });

  it("without resource, tokens behave as before: opaque, no aud", async () => {
    const { client, auth } = await setUp(server, []);
    const res = await exchange(server, client.client_id, auth);
    expect(res.status, res.text).toBe(200);
    expect((res.json.access_token as string).split(".")).toHaveLength(1);
  });
});
