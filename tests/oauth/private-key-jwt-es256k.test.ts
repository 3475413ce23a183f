import { randomUUID } from "node:crypto";
import { exportJWK, generateKeyPair, SignJWT, type JWK } from "jose";
import { describe, expect, it } from "vitest";
import { bitcoinKey } from "../helpers/dpop.js";
import { useTestServer } from "../helpers/fixtures.js";
import { authorize, pkce, REDIRECT, registerClient, signUp, token } from "../helpers/oauth.js";

/**
 * RFC 7523 §2.2 client authentication (private_key_jwt) with a key from the client's registered
 * `jwks`: ES256K, a Bitcoin key (lib/es256k.ts), beside the algorithms jose verifies.
 */

const server = useTestServer();
const ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
const tokenUrl = () => `${server.url}/api/auth/oauth2/token`;

interface AssertionKey {
  jwk: JWK;
  sign(header: Record<string, unknown>, payload: Record<string, unknown>): Promise<string>;
}

async function joseKey(alg: "RS256" | "ES256" | "EdDSA"): Promise<AssertionKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { crv: alg === "EdDSA" ? "Ed25519" : undefined });
  return { jwk: await exportJWK(publicKey), sign: (header, payload) => new SignJWT(payload).setProtectedHeader({ ...header, alg } as never).sign(privateKey) };
}

/** A confidential client that authenticates with `key` (registered in its jwks under `kid`). */
async function keyClient(key: AssertionKey, kid = randomUUID()) {
  const client = await registerClient(server, { application_type: "web", token_endpoint_auth_method: "private_key_jwt", jwks: { keys: [{ ...key.jwk, kid, use: "sig" }] } });
  return { clientId: client.client_id, kid };
}

function assertion(key: AssertionKey, clientId: string, kid: string, claims: Record<string, unknown> = {}) {
  const now = Math.floor(Date.now() / 1000);
  return key.sign({ kid, typ: "JWT" }, { iss: clientId, sub: clientId, aud: tokenUrl(), iat: now, exp: now + 60, jti: randomUUID(), ...claims });
}

/** A code for a fresh person, redeemed with `client_assertion`. */
async function redeem(clientId: string, clientAssertion: string) {
  const person = await signUp(server);
  const { verifier, challenge } = pkce();
  const auth = await authorize(server, { clientId, cookie: person.cookie, challenge, scope: "openid offline_access" });
  expect(auth.code, auth.url.toString()).toBeTruthy();
  return token(server, { grant_type: "authorization_code", code: auth.code!, redirect_uri: REDIRECT, code_verifier: verifier, client_assertion_type: ASSERTION_TYPE, client_assertion: clientAssertion });
}

describe("private_key_jwt", () => {
  it("discovery lists ES256K beside the algorithms jose verifies", async () => {
    const meta = (await server.api("/.well-known/oauth-authorization-server")).json;
    expect(meta.token_endpoint_auth_methods_supported).toContain("private_key_jwt");
    expect(meta.token_endpoint_auth_signing_alg_values_supported).toEqual(expect.arrayContaining(["ES256K", "RS256", "ES256", "EdDSA"]));
  });

  it.each(["ES256K", "RS256", "ES256", "EdDSA"] as const)("an assertion signed with %s by a registered key authenticates the client", async (alg) => {
    const key = alg === "ES256K" ? bitcoinKey() : await joseKey(alg);
    const { clientId, kid } = await keyClient(key);
    const res = await redeem(clientId, await assertion(key, clientId, kid));
    expect(res.status, res.text).toBe(200);
    expect(res.json.access_token).toEqual(expect.any(String));
  });

  it("an ES256K assertion by a key the client did not register is refused", async () => {
    const { clientId, kid } = await keyClient(bitcoinKey());
    const res = await redeem(clientId, await assertion(bitcoinKey(), clientId, kid));
    expect(res.status).toBe(401);
    expect(res.json.error).toBe("invalid_client");
  });

  it.each([
    ["another audience", { aud: "https://elsewhere.example/token" }],
    ["another issuer", { iss: "someone-else" }],
    ["an expired one", { exp: Math.floor(Date.now() / 1000) - 10 }],
    ["no exp", { exp: undefined }],
  ])("an ES256K assertion with %s is refused", async (_, claims) => {
    const key = bitcoinKey();
    const { clientId, kid } = await keyClient(key);
    const res = await redeem(clientId, await assertion(key, clientId, kid, claims));
    expect([400, 401]).toContain(res.status);
    expect(res.json.error).toBe("invalid_client");
  });

  it("a replayed ES256K assertion is refused", async () => {
    const key = bitcoinKey();
    const { clientId, kid } = await keyClient(key);
    const signed = await assertion(key, clientId, kid);
    expect((await redeem(clientId, signed)).status).toBe(200);
    const again = await redeem(clientId, signed);
    expect(again.status).toBeGreaterThanOrEqual(400);
    expect(again.json.error).toBe("invalid_client");
  });

  // The refresh grant runs in one transaction (lib/atomic-refresh.ts): the replay is told without
  // a failed statement in it (plugins/oauth-store/assertion-keys.ts), on SQLite and PostgreSQL.
  it("a replayed ES256K assertion is refused at the refresh grant, and the grant goes on", async () => {
    const key = bitcoinKey();
    const { clientId, kid } = await keyClient(key);
    const first = await redeem(clientId, await assertion(key, clientId, kid));
    expect(first.status, first.text).toBe(200);
    const refresh = (refreshToken: string, clientAssertion: string) =>
      token(server, { grant_type: "refresh_token", refresh_token: refreshToken, client_assertion_type: ASSERTION_TYPE, client_assertion: clientAssertion });
    const once = await assertion(key, clientId, kid);
    const rotated = await refresh(first.json.refresh_token, once);
    expect(rotated.status, rotated.text).toBe(200);
    const again = await refresh(rotated.json.refresh_token, once);
    expect(again.status).toBe(400);
    expect(again.json.error).toBe("invalid_client");
    // The replay spent nothing: the refresh token it presented still rotates with a fresh assertion.
    const fresh = await refresh(rotated.json.refresh_token, await assertion(key, clientId, kid));
    expect(fresh.status, fresh.text).toBe(200);
  });
});
