import { decodeJwt } from "jose";
import * as oidc from "openid-client";
import { describe, expect, it } from "vitest";
import { useTestServer } from "../helpers/fixtures.js";
import { authorizationRequest, authorizeUrl, pkce, registerClient, signUp, token } from "../helpers/oauth.js";
import { postForm, type TestServer } from "../helpers/server.js";
import { exchange, exchangeForm, registerAgent, verified } from "../helpers/token-exchange.js";

/**
 * RFC 9396 rich authorization requests: `authorization_details` from the request (direct or
 * pushed) through consent into the access token, the token response, introspection and refresh.
 */
const server = useTestServer();
const insecure = { execute: [oidc.allowInsecureRequests] };
const APP = "https://app.example/cb";
const BANK = "https://payments.example/api";
const ADDRESS = "1BoatSLRHtKNngkdXEeobR76b53LETtpyT";

const transfer = (amount = "1000", address = ADDRESS) => ({ type: "payment_transfer", instructedAmount: { currency: "USD", amount }, creditorAccount: { address }, creditorName: "Alice" });
const capability = { type: "agent_capability", capability: "nft.verify_ownership", constraints: { collection: "bap-pass" } };

function next(res: { status: number; headers: Headers; json: any }): string | null {
  if (res.status >= 300 && res.status < 400) return res.headers.get("location");
  return typeof res.json?.url === "string" ? res.json.url : null;
}

async function confidentialClient(s: TestServer) {
  const client = await registerClient(s, { application_type: "web", redirect_uris: [APP], token_endpoint_auth_method: "client_secret_basic" });
  const basic = { authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString("base64")}` };
  return { client, basic };
}

/** Authorize over the API as a signed-in person; `consented` says whether the consent step was shown. */
async function authorizeWith(s: TestServer, clientId: string, cookie: string, extra: Record<string, string>) {
  const { verifier, challenge } = pkce();
  const { params } = authorizationRequest(s, clientId, { redirectUri: APP, scope: "openid offline_access", extra: { code_challenge: challenge, ...extra } });
  let res = await s.api(authorizeUrl(s, params), { cookie });
  let location = next(res);
  const consented = Boolean(location?.startsWith("/consent"));
  if (consented) {
    res = await s.api("/api/auth/oauth2/consent", { cookie, body: { accept: true, oauth_query: new URL(location!, s.url).search.slice(1) } });
    location = next(res);
  }
  return { back: new URL(location!, s.url), verifier, consented };
}

describe("authorization_details (RFC 9396)", () => {
  it("discovery lists the supported types", async () => {
    const meta = await server.api("/.well-known/oauth-authorization-server");
    expect(meta.json.authorization_details_types_supported).toEqual(["payment_transfer", "agent_capability"]);
  });

  it("travel from the request into the access token, the token response, introspection and refresh", async () => {
    const person = await signUp(server);
    const { client, basic } = await confidentialClient(server);
    const details = [transfer(), capability];
    // An earlier consent to the same scopes does not cover a transfer: the details are asked for every time.
    await authorizeWith(server, client.client_id, person.cookie, { resource: BANK });
    const { back, verifier, consented } = await authorizeWith(server, client.client_id, person.cookie, { resource: BANK, authorization_details: JSON.stringify(details) });
    expect(consented).toBe(true);
    const tokens = await token(server, { grant_type: "authorization_code", code: back.searchParams.get("code")!, redirect_uri: APP, code_verifier: verifier }, basic);
    expect(tokens.status, tokens.text).toBe(200);
    expect(tokens.json.authorization_details).toEqual(details);
    const claims = decodeJwt(tokens.json.access_token);
    expect(claims.aud).toBe(BANK);
    expect(claims.authorization_details).toEqual(details);

    const intro = await postForm(server, "/api/auth/oauth2/introspect", { token: tokens.json.access_token }, basic);
    expect(intro.json.active).toBe(true);
    expect(intro.json.authorization_details).toEqual(details);

    const refreshed = await token(server, { grant_type: "refresh_token", refresh_token: tokens.json.refresh_token }, basic);
    expect(refreshed.status, refreshed.text).toBe(200);
    expect(decodeJwt(refreshed.json.access_token).authorization_details).toEqual(details);
    expect(refreshed.json.authorization_details).toEqual(details);
    // And again from the rotated refresh token.
    const twice = await token(server, { grant_type: "refresh_token", refresh_token: refreshed.json.refresh_token }, basic);
    expect(decodeJwt(twice.json.access_token).authorization_details).toEqual(details);
  });

  it("a grant without details gets none", async () => {
    const person = await signUp(server);
    const { client, basic } = await confidentialClient(server);
    const { back, verifier } = await authorizeWith(server, client.client_id, person.cookie, { resource: BANK });
    const tokens = await token(server, { grant_type: "authorization_code", code: back.searchParams.get("code")!, redirect_uri: APP, code_verifier: verifier }, basic);
    expect(tokens.status).toBe(200);
    expect(tokens.json.authorization_details).toBeUndefined();
    expect(decodeJwt(tokens.json.access_token).authorization_details).toBeUndefined();
  });

  it("invalid details are refused at the authorization endpoint", async () => {
    const person = await signUp(server);
    const { client } = await confidentialClient(server);
    const bad: Array<[unknown, RegExp]> = [
      [[{ type: "wire_transfer" }], /type/],
      [[{ ...transfer(), instructedAmount: { currency: "USD", amount: "-5" } }], /\/0\/instructedAmount\/amount/],
      [[{ ...transfer(), extra: "granted?" }], /extra|key/i],
      [[{ type: "agent_capability", capability: "wallet.drain" }], /capabilit/],
      [[{ ...capability, constraints: { nonsense: "x" } }], /arguments/],
      [{ not: "an array" }, /array/],
    ];
    for (const [details, why] of bad) {
      const { params } = authorizationRequest(server, client.client_id, { redirectUri: APP, scope: "openid", extra: { resource: BANK, authorization_details: JSON.stringify(details) } });
      const res = await server.api(authorizeUrl(server, params), { cookie: person.cookie });
      const location = new URL(next(res)!, server.url);
      expect(location.pathname, JSON.stringify(details)).toBe("/error");
      expect(location.searchParams.get("error")).toBe("invalid_authorization_details");
      expect(location.searchParams.get("error_description")).toMatch(why);
    }
    // Details are never granted silently.
    const silent = authorizationRequest(server, client.client_id, { redirectUri: APP, scope: "openid", extra: { resource: BANK, prompt: "none", authorization_details: JSON.stringify([transfer()]) } });
    const refused = await server.api(authorizeUrl(server, silent.params), { cookie: person.cookie });
    expect(new URL(next(refused)!, server.url).searchParams.get("error")).toBe("invalid_authorization_details");
    // Details need a resource to travel to.
    const { params } = authorizationRequest(server, client.client_id, { redirectUri: APP, scope: "openid", extra: { authorization_details: JSON.stringify([transfer()]) } });
    const res = await server.api(authorizeUrl(server, params), { cookie: person.cookie });
    expect(new URL(next(res)!, server.url).searchParams.get("error")).toBe("invalid_authorization_details");
  });

  it("openid-client pushes a large request (over 8 KB of details) and gets the details back with the tokens", async () => {
    const person = await signUp(server);
    const { client } = await confidentialClient(server);
    const config = await oidc.discovery(new URL(server.url), client.client_id, client.client_secret, oidc.ClientSecretBasic(client.client_secret!), insecure);
    const details = Array.from({ length: 45 }, (_, i) => ({ ...transfer(String(10 + i), `1BoatSLRHtKNngkdXEeobR76b53LE${String(i).padStart(5, "x")}`), remittanceInformation: `invoice ${i} of the quarterly supplier run, paid in parts` }));
    const json = JSON.stringify(details);
    expect(json.length).toBeGreaterThan(8 * 1024);
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = await oidc.buildAuthorizationUrlWithPAR(config, {
      redirect_uri: APP,
      scope: "openid",
      resource: BANK,
      authorization_details: json,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
      state,
    });
    expect(url.toString().length).toBeLessThan(300);
    let res = await server.api(`${url.pathname}${url.search}`, { cookie: person.cookie });
    const consent = next(res)!;
    expect(consent.startsWith("/consent")).toBe(true);
    res = await server.api("/api/auth/oauth2/consent", { cookie: person.cookie, body: { accept: true, oauth_query: new URL(consent, server.url).search.slice(1) } });
    const back = new URL(next(res)!);
    const tokens = await oidc.authorizationCodeGrant(config, back, { pkceCodeVerifier: verifier, expectedState: state });
    expect(tokens.authorization_details).toEqual(details);
    expect(decodeJwt(tokens.access_token).authorization_details).toEqual(details);
    const intro = await oidc.tokenIntrospection(config, tokens.access_token);
    expect(intro.active).toBe(true);
    expect(intro.authorization_details).toEqual(details);
  });

  it("token exchange keeps the subject token's details, or narrows them, never widens", async () => {
    const person = await signUp(server);
    const { client, basic } = await confidentialClient(server);
    const granted = [transfer("1000"), capability];
    const { back, verifier } = await authorizeWith(server, client.client_id, person.cookie, { resource: BANK, authorization_details: JSON.stringify(granted) });
    const tokens = await token(server, { grant_type: "authorization_code", code: back.searchParams.get("code")!, redirect_uri: APP, code_verifier: verifier }, basic);
    const subject = tokens.json.access_token as string;
    const agent = await registerAgent(server);

    const kept = await exchange(agent, subject, { resource: BANK });
    expect((await verified(server, kept.access_token, BANK)).authorization_details).toEqual(granted);

    const narrower = [transfer("250")];
    const narrowed = await exchange(agent, subject, { resource: BANK, authorization_details: JSON.stringify(narrower) });
    expect((await verified(server, narrowed.access_token, BANK)).authorization_details).toEqual(narrower);
    expect(narrowed.authorization_details).toEqual(narrower);

    const wider: Array<[unknown[], string]> = [
      [[transfer("1000.01")], "a larger amount"],
      [[transfer("10", "1AnotherAddressXXXXXXXXXXXXXXXXXX")], "another address"],
      [[{ ...capability, constraints: {} }], "a capability without its pinned argument"],
      [[{ type: "agent_capability", capability: "backup.push" }], "another capability"],
    ];
    // A subject token granted without details gets none added.
    const plain = await authorizeWith(server, client.client_id, person.cookie, { resource: BANK });
    const plainTokens = await token(server, { grant_type: "authorization_code", code: plain.back.searchParams.get("code")!, redirect_uri: APP, code_verifier: plain.verifier }, basic);
    wider.push([[transfer("1")], "details on a subject token without any"]);
    const subjects = new Map(wider.map(([d, what]) => [what, what.startsWith("details on") ? (plainTokens.json.access_token as string) : subject]));
    for (const [details, what] of wider) {
      const res = await exchangeForm(server, agent, subjects.get(what)!, { resource: BANK, authorization_details: JSON.stringify(details) });
      expect(res.status, what).toBe(400);
      expect(res.json.error, what).toBe("invalid_authorization_details");
    }
  });
});
