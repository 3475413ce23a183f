import { createLocalJWKSet, jwtVerify } from "jose";
import * as oidc from "openid-client";
import { expect } from "vitest";
import { authorize, pkce, REDIRECT, registerClient, signUp, token } from "./oauth.js";
import { postForm, type TestServer } from "./server.js";

/**
 * RFC 8693 token exchange as an agent does it: a confidential client registered for the grant
 * (openid-client, its generic grant request), a person's grant to an app to exchange from, and
 * the places a delegated token is used (introspection, /mcp).
 */
export const GRANT = "urn:ietf:params:oauth:grant-type:token-exchange";
export const ACCESS_TOKEN = "urn:ietf:params:oauth:token-type:access_token";
const insecure = { execute: [oidc.allowInsecureRequests] };
export const mcp = (target: TestServer) => `${target.url}/mcp`;
export const basic = (id: string, secret: string) => ({ authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString("base64")}` });

export interface Agent {
  id: string;
  secret: string;
  config: oidc.Configuration;
}

/** A confidential client registered for token exchange, and openid-client configured as it. */
export async function registerAgent(target: TestServer, name = "Agent"): Promise<Agent> {
  const client = await registerClient(target, {
    client_name: name,
    application_type: "web",
    token_endpoint_auth_method: "client_secret_basic",
    grant_types: ["authorization_code", GRANT],
  });
  const secret = client.client_secret!;
  const config = await oidc.discovery(new URL(target.url), client.client_id, secret, oidc.ClientSecretBasic(secret), insecure);
  return { id: client.client_id, secret, config };
}

/** A person's grant to a public app: its access token (opaque, or a JWT for `resource`) and refresh token. */
export async function personsGrant(target: TestServer, opts: { resource?: string; scope?: string } = {}) {
  const person = await signUp(target);
  const app = await registerClient(target, { client_name: "Person's App" });
  const { verifier, challenge } = pkce();
  const extra: Record<string, string> = opts.resource ? { code_challenge: challenge, resource: opts.resource } : { code_challenge: challenge };
  const auth = await authorize(target, { clientId: app.client_id, cookie: person.cookie, scope: opts.scope ?? "openid profile offline_access", extra });
  const res = await token(target, { grant_type: "authorization_code", code: auth.code!, redirect_uri: REDIRECT, client_id: app.client_id, code_verifier: verifier, ...(opts.resource ? { resource: opts.resource } : {}) });
  expect(res.status, res.text).toBe(200);
  return { person, app, accessToken: res.json.access_token as string, refreshToken: res.json.refresh_token as string, expiresIn: res.json.expires_in as number };
}

export function exchange(agent: Agent, subjectToken: string, params: Record<string, string> = {}) {
  return oidc.genericGrantRequest(agent.config, GRANT, { subject_token: subjectToken, subject_token_type: ACCESS_TOKEN, ...params });
}

/** The same request as a plain form post, for the refusals (status and RFC 6749 §5.2 body); `headers` adds a DPoP proof. */
export function exchangeForm(target: Pick<TestServer, "url">, agent: { id: string; secret: string }, subjectToken: string, params: Record<string, string> = {}, headers: Record<string, string> = {}) {
  return postForm(target, "/api/auth/oauth2/token", { grant_type: GRANT, subject_token: subjectToken, subject_token_type: ACCESS_TOKEN, ...params }, { ...basic(agent.id, agent.secret), ...headers });
}

export async function verified(target: TestServer, accessToken: string, audience: string) {
  const jwks = createLocalJWKSet((await target.api("/api/auth/jwks")).json);
  return (await jwtVerify(accessToken, jwks, { issuer: target.url, audience, typ: "at+jwt" })).payload;
}

export function introspect(target: TestServer, agent: Agent, accessToken: string) {
  return postForm(target, "/api/auth/oauth2/introspect", { token: accessToken }, basic(agent.id, agent.secret));
}

export function callMcp(target: TestServer, accessToken: string) {
  return target.api("/mcp", { body: { jsonrpc: "2.0", id: 1, method: "tools/list" }, headers: { accept: "application/json, text/event-stream", authorization: `Bearer ${accessToken}` } });
}
