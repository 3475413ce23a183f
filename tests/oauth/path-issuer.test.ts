import * as oidc from "openid-client";
import { describe, expect, it } from "vitest";
import { useTestServer } from "../helpers/fixtures.js";
import { REDIRECT, registerClient, signUp } from "../helpers/oauth.js";
import { freePort, readResponse, type TestServer } from "../helpers/server.js";

/**
 * Discovery as MCP clients probe it (RFC 8414 §3.1 path-inserted, OIDC Discovery §4
 * path-inserted and path-appended), with a root issuer and with an issuer that has a path
 * (AUTH_URL=http://host/idp: the service under /idp, the path-inserted documents at the root).
 */
const root = useTestServer();
const pathed = useTestServer(async () => {
  const port = await freePort();
  return { PORT: String(port), AUTH_URL: `http://127.0.0.1:${port}/idp` };
});

const insecure = { execute: [oidc.allowInsecureRequests] };

/** The three discovery URLs for `issuer`: RFC 8414 path-inserted, OIDC path-inserted, OIDC path-appended. */
function discoveryUrls(issuer: string) {
  const { origin, pathname } = new URL(issuer);
  const path = pathname.replace(/\/$/, "");
  return {
    oauth: `${origin}/.well-known/oauth-authorization-server${path}`,
    oidcInserted: `${origin}/.well-known/openid-configuration${path}`,
    oidcAppended: `${issuer}/.well-known/openid-configuration`,
  };
}

async function get(url: string) {
  return readResponse(await fetch(url, { redirect: "manual" }));
}

async function checkDiscovery(server: TestServer) {
  const urls = discoveryUrls(server.url);
  const [oauth, inserted, appended] = await Promise.all([get(urls.oauth), get(urls.oidcInserted), get(urls.oidcAppended)]);
  for (const res of [oauth, inserted, appended]) {
    expect(res.status).toBe(200);
    expect(res.json.issuer).toBe(server.url);
    expect(res.json.code_challenge_methods_supported).toEqual(["S256"]);
    expect(res.json.authorization_response_iss_parameter_supported).toBe(true);
  }
  // The two OIDC URLs are one document; RFC 8414's names the same endpoints.
  expect(inserted.text).toBe(appended.text);
  for (const key of ["authorization_endpoint", "token_endpoint", "jwks_uri", "registration_endpoint", "introspection_endpoint", "revocation_endpoint"]) {
    expect(oauth.json[key], key).toBe(inserted.json[key]);
    expect(oauth.json[key], key).toMatch(new RegExp(`^${server.url}/api/auth/`));
  }
  // Every endpoint named is reachable: none answers 404.
  for (const [key, value] of Object.entries(inserted.json)) {
    if (!(key.endsWith("_endpoint") || key === "jwks_uri" || key === "service_documentation") || typeof value !== "string") continue;
    // Some are POST only: better-auth's router answers a GET there 404 as for an unknown path.
    let res = await fetch(value, { redirect: "manual" });
    if (res.status === 404) res = await fetch(value, { method: "POST", redirect: "manual", headers: { "content-type": "application/x-www-form-urlencoded", origin: new URL(server.url).origin }, body: "" });
    expect(res.status, `${key} ${value}`).not.toBe(404);
  }
  return inserted.json;
}

describe("discovery with a root issuer", () => {
  it("answers the three URLs (which coincide) with issuer exactly AUTH_URL", async () => {
    const urls = discoveryUrls(root.url);
    expect(urls.oidcInserted).toBe(urls.oidcAppended);
    await checkDiscovery(root);
  });
});

describe("an issuer with a path (AUTH_URL=http://host/idp)", () => {
  it("answers the three URLs with the same issuer, and every endpoint under the path", async () => {
    expect(new URL(pathed.url).pathname).toBe("/idp");
    const meta = await checkDiscovery(pathed);
    expect(meta.authorization_endpoint).toBe(`${pathed.url}/api/auth/oauth2/authorize`);
    const origin = new URL(pathed.url).origin;
    // Outside the path and the discovery documents, nothing is served.
    expect((await get(`${origin}/api/auth/oauth2/token`)).status).toBe(404);
    expect((await get(`${origin}/.well-known/openid-configuration`)).status).toBe(404);
  });

  it("publishes the MCP server's metadata path-inserted (RFC 9728 §3.1) and names it in the 401", async () => {
    const origin = new URL(pathed.url).origin;
    const metadataUrl = `${origin}/.well-known/oauth-protected-resource/idp/mcp`;
    const res = await get(metadataUrl);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ resource: `${pathed.url}/mcp`, authorization_servers: [pathed.url] });
    const challenge = await fetch(`${pathed.url}/mcp`, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" }, body: "{}" });
    expect(challenge.status).toBe(401);
    expect(challenge.headers.get("www-authenticate")).toBe(`Bearer resource_metadata="${metadataUrl}"`);
  });

  it("keeps its cookies and redirects under the path, and its pages link under it", async () => {
    const person = await fetch(`${pathed.url}/api/auth/sign-up/email`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: new URL(pathed.url).origin },
      body: JSON.stringify({ name: "Path Person", email: `path-${Date.now()}@example.com`, password: "correct horse battery staple" }),
    });
    expect(person.status).toBe(200);
    for (const cookie of person.headers.getSetCookie()) expect(cookie).toMatch(/; Path=\/idp(;|$)/i);
    const account = await fetch(`${pathed.url}/account`, { redirect: "manual" });
    expect(account.headers.get("location")).toMatch(/^\/idp\/sign-in/);
    const page = await fetch(`${pathed.url}/sign-in`);
    const html = await page.text();
    expect(html).not.toMatch(/\b(href|src|action|data-[\w-]+)="\/(?!idp[/"])/);
    // The sign-in scripts' endpoints and destination (data-* attributes) too.
    expect(html).toContain('data-verify-path="/idp/api/auth/passkey/verify-authentication"');
    expect(html).toContain('data-done="/idp/"');
    expect(html).toMatch(/href="\/idp\//);
  });

  it("carries a full authorization-code flow for openid-client discovering from the path issuer", async () => {
    const issuer = new URL(pathed.url);
    const person = await signUp(pathed);
    const client = await registerClient(pathed);
    const config = await oidc.discovery(issuer, client.client_id, undefined, oidc.None(), insecure);
    expect(config.serverMetadata().issuer).toBe(pathed.url);
    const pkceCodeVerifier = oidc.randomPKCECodeVerifier();
    const expectedState = oidc.randomState();
    const expectedNonce = oidc.randomNonce();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: "openid profile email",
      code_challenge: await oidc.calculatePKCECodeChallenge(pkceCodeVerifier),
      code_challenge_method: "S256",
      state: expectedState,
      nonce: expectedNonce,
    });
    expect(url.href.startsWith(`${pathed.url}/api/auth/oauth2/authorize?`)).toBe(true);
    // The browser's part: the authorization request sends a signed-in person to the consent page, under the path.
    const first = await fetch(url, { headers: { cookie: person.cookie }, redirect: "manual" });
    const toConsent = new URL(first.headers.get("location") ?? (await first.json()).url, issuer);
    expect(toConsent.pathname).toBe("/idp/consent");
    const consentPage = await fetch(toConsent, { headers: { cookie: person.cookie } });
    expect(consentPage.status).toBe(200);
    const allowed = await readResponse(
      await fetch(`${pathed.url}/api/auth/oauth2/consent`, {
        method: "POST",
        headers: { "content-type": "application/json", cookie: person.cookie, origin: issuer.origin },
        body: JSON.stringify({ accept: true, oauth_query: toConsent.search.slice(1) }),
      }),
    );
    const back = new URL(allowed.json?.url ?? allowed.headers.get("location"));
    expect(back.searchParams.get("iss")).toBe(pathed.url);
    const tokens = await oidc.authorizationCodeGrant(config, back, { pkceCodeVerifier, expectedState, expectedNonce, idTokenExpected: true });
    expect(tokens.claims()?.iss).toBe(pathed.url);
    expect(tokens.claims()?.sub).toBe(person.user.id);
    const info = await oidc.fetchUserInfo(config, tokens.access_token, person.user.id);
    expect(info.email).toBe(person.email);
  });
});

describe("Bitcoin-Auth under an issuer with a path", () => {
  it("accepts a token signed over the public path the client requested (/idp/api/...), and the inner path", async () => {
    const { newIdentity, signRequest } = await import("../helpers/bap.js");
    const server = pathed;
    const prefix = new URL(server.url).pathname;
    const id = newIdentity();
    const up = JSON.stringify({ bapId: id.bapId, intent: "sign-up" });
    const signedUp = () => signRequest(id.key, `${prefix}/api/auth/sign-up/sigma`, up);
    const enrolled = await server.api("/api/auth/sign-up/sigma", { body: up, headers: { "x-auth-token": signedUp(), "x-sigma-enrollment-proof": signedUp() } });
    expect(enrolled.status, enrolled.text).toBe(200);
    const body = JSON.stringify({ bapId: id.bapId });
    for (const path of [`${prefix}/api/auth/sign-in/sigma`, "/api/auth/sign-in/sigma"]) {
      const res = await server.api("/api/auth/sign-in/sigma", { body, headers: { "x-auth-token": signRequest(id.key, path, body) } });
      expect(res.status, `${path}: ${res.text}`).toBe(200);
    }
    // Another prefix is another service: refused.
    const other = await server.api("/api/auth/sign-in/sigma", { body, headers: { "x-auth-token": signRequest(id.key, `/other/api/auth/sign-in/sigma`, body) } });
    expect(other.status).toBe(401);
  });
});
