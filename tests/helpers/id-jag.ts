import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey as JoseKey, type JWTPayload } from "jose";
import * as oidc from "openid-client";
import { expect } from "vitest";
import { authorize, pkce, REDIRECT, registerClient, signUp, token } from "./oauth.js";
import { freePort, type TestServer } from "./server.js";
import { basic, type Agent } from "./token-exchange.js";

/**
 * Identity Assertion JWT Authorization Grants as an enterprise app does them: at the identity
 * provider, token exchange for an ID-JAG (openid-client, its generic grant request), and at the
 * resource's authorization server the JWT bearer grant. `startAssertionIssuer` is an identity
 * provider of our own making (RFC 8414 discovery and a JWK Set over HTTP) for assertions no
 * well-behaved one issues (expired, long-lived, for another audience).
 */
export const TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange";
export const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer";
export const ID_JAG = "urn:ietf:params:oauth:token-type:id-jag";
export const ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token";
const insecure = { execute: [oidc.allowInsecureRequests] };

/** A confidential client and openid-client configured as it (the token exchange helper's shape). */
export type Client = Agent;

/** A confidential client at `target` registered for `grants` (and the code flow), openid-client configured as it. */
export async function confidentialClient(target: TestServer, grants: string[], metadata: Record<string, unknown> = {}): Promise<Client> {
  const client = await registerClient(target, { application_type: "web", token_endpoint_auth_method: "client_secret_basic", grant_types: ["authorization_code", ...grants], ...metadata });
  const secret = client.client_secret!;
  const config = await oidc.discovery(new URL(target.url), client.client_id, secret, oidc.ClientSecretBasic(secret), insecure);
  return { id: client.client_id, secret, config };
}

/** Marks a person's e-mail verified (sign-up here does not send the mail). */
export async function verifyEmail(target: TestServer, email: string) {
  await target.db.updateTable("user").set({ emailVerified: true }).where("email", "=", email).execute();
}

/** A person signed in at the identity provider and the tokens of their sign-in at `client` (code flow, openid). */
export async function signIn(idp: TestServer, client: Client, scope = "openid profile email") {
  const person = await signUp(idp);
  await verifyEmail(idp, person.email);
  const { verifier, challenge } = pkce();
  const auth = await authorize(idp, { clientId: client.id, cookie: person.cookie, challenge, scope });
  const res = await token(idp, { grant_type: "authorization_code", code: auth.code!, redirect_uri: REDIRECT, code_verifier: verifier }, basic(client.id, client.secret));
  expect(res.status, res.text).toBe(200);
  return { person, idToken: res.json.id_token as string, accessToken: res.json.access_token as string };
}

/** The same person (by e-mail) at the resource's authorization server, verified or not. */
export async function samePersonAt(target: TestServer, email: string, verified = true) {
  const existing = await target.db.selectFrom("user").select("id").where("email", "=", email).executeTakeFirst();
  const id = existing?.id ?? (await signUp(target, { email })).user.id;
  if (verified) await verifyEmail(target, email);
  else await target.db.updateTable("user").set({ emailVerified: false }).where("email", "=", email).execute();
  return id;
}

export function requestAssertion(client: Client, subjectToken: string, params: Record<string, string>) {
  return oidc.genericGrantRequest(client.config, TOKEN_EXCHANGE, { requested_token_type: ID_JAG, subject_token: subjectToken, subject_token_type: ID_TOKEN, ...params });
}

export function redeem(client: Client, assertion: string, params: Record<string, string> = {}) {
  return oidc.genericGrantRequest(client.config, JWT_BEARER, { assertion, ...params });
}

/** An identity provider over HTTP: its discovery document and key set; `sign` makes any assertion with its key. */
export async function startAssertionIssuer() {
  const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
  const kid = randomUUID();
  const jwk = { ...(await exportJWK(publicKey)), kid, alg: "ES256", use: "sig" };
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const server: Server = createServer((req, res) => {
    const body = req.url === "/.well-known/oauth-authorization-server" ? { issuer, jwks_uri: `${issuer}/jwks`, token_endpoint: `${issuer}/token` } : req.url === "/jwks" ? { keys: [jwk] } : null;
    res.writeHead(body ? 200 : 404, { "content-type": "application/json" });
    res.end(JSON.stringify(body ?? { error: "not_found" }));
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    issuer,
    sign(claims: JWTPayload, header: { typ?: string } = {}) {
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({ iss: issuer, iat: now, exp: now + 120, jti: randomUUID(), ...claims })
        .setProtectedHeader({ alg: "ES256", kid, typ: header.typ ?? "oauth-id-jag+jwt" })
        .sign(privateKey as JoseKey);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
