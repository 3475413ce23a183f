import { randomUUID } from "node:crypto";
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey as JoseKey } from "jose";
import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestServer } from "../helpers/fixtures.js";
import { signUp, token } from "../helpers/oauth.js";
import { postForm, startTestServer, type TestServer } from "../helpers/server.js";
import { deleteExpiredClientAssertions } from "../../plugins/oauth-store/clients.js";

/**
 * private_key_jwt (RFC 7523 §2.2, OIDC Core §9): a machine client proves itself with a JWT
 * signed by a key it registered (`jwks`), never with a shared secret. openid-client's own
 * PrivateKeyJwt client authentication drives the grant; hand-made assertions test the rules.
 */
const server = useTestServer();
const ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
const insecure = { execute: [oidc.allowInsecureRequests] };
type Alg = "RS256" | "ES256" | "EdDSA";

async function keyPair(alg: Alg) {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const kid = randomUUID();
  return { alg, kid, privateKey: privateKey as JoseKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: "sig" } };
}
type Key = Awaited<ReturnType<typeof keyPair>>;

async function registerKeyClient(keys: Key[]) {
  const person = await signUp(server);
  const res = await server.api("/api/auth/oauth2/register", {
    body: { client_name: "Key job", grant_types: ["client_credentials"], token_endpoint_auth_method: "private_key_jwt", jwks: { keys: keys.map((k) => k.jwk) } },
    headers: { cookie: person.cookie },
  });
  expect(res.status, res.text).toBe(201);
  expect(res.json.client_secret).toBeUndefined();
  return res.json.client_id as string;
}

function assertion(clientId: string, key: Key, claims: { aud?: string; jti?: string; exp?: number } = {}) {
  return new SignJWT({ jti: claims.jti ?? randomUUID() })
    .setProtectedHeader({ alg: key.alg, kid: key.kid })
    .setIssuer(clientId)
    .setSubject(clientId)
    .setAudience(claims.aud ?? server.url)
    .setIssuedAt()
    .setExpirationTime(claims.exp ?? Math.floor(Date.now() / 1000) + 60)
    .sign(key.privateKey);
}

const grant = (clientAssertion: string, extra: Record<string, string> = {}) =>
  token(server, { grant_type: "client_credentials", client_assertion_type: ASSERTION_TYPE, client_assertion: clientAssertion, ...extra });

describe("private_key_jwt client authentication", () => {
  it("is advertised in discovery with the algorithms it verifies", async () => {
    const m = (await server.api("/.well-known/oauth-authorization-server")).json;
    expect(m.token_endpoint_auth_methods_supported).toContain("private_key_jwt");
    for (const alg of ["RS256", "ES256", "EdDSA"]) expect(m.token_endpoint_auth_signing_alg_values_supported).toContain(alg);
  });

  for (const alg of ["RS256", "ES256", "EdDSA"] as const) {
    it(`authenticates openid-client's PrivateKeyJwt with an ${alg} key for the client credentials grant`, async () => {
      const key = await keyPair(alg);
      const clientId = await registerKeyClient([key]);
      // openid-client names an Ed25519 signature by RFC 9864's fully specified `Ed25519`; the
      // server verifies (and advertises) `EdDSA`, the same signature under RFC 8037's name.
      const sameSignature = alg === "EdDSA" ? { [oidc.modifyAssertion]: (header: { alg?: string }) => void (header.alg = "EdDSA") } : undefined;
      const auth = oidc.PrivateKeyJwt({ key: key.privateKey as CryptoKey, kid: key.kid }, sameSignature);
      const config = await oidc.discovery(new URL(server.url), clientId, undefined, auth, { ...insecure, algorithm: "oauth2" });
      const tokens = await oidc.clientCredentialsGrant(config, { resource: `${server.url}/mcp` });
      expect(tokens.token_type.toLowerCase()).toBe("bearer");
      expect(tokens.refresh_token).toBeUndefined();
      expect(tokens.scope).toBe("service:read");
    });
  }

  it("accepts the token endpoint as aud as well as the issuer", async () => {
    const key = await keyPair("ES256");
    const clientId = await registerKeyClient([key]);
    const res = await grant(await assertion(clientId, key, { aud: `${server.url}/api/auth/oauth2/token` }));
    expect(res.status, res.text).toBe(200);
  });

  it("refuses an assertion for another audience, signed by another key, or expired", async () => {
    const key = await keyPair("ES256");
    const stranger = await keyPair("ES256");
    const clientId = await registerKeyClient([key]);
    const cases = [
      await assertion(clientId, key, { aud: "https://elsewhere.example" }),
      await assertion(clientId, { ...stranger, kid: key.kid }),
      await assertion(clientId, key, { exp: Math.floor(Date.now() / 1000) - 5 }),
    ];
    for (const bad of cases) {
      const res = await grant(bad);
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(res.json.error).toBe("invalid_client");
    }
  });

  it("refuses a replayed assertion (its jti is accepted once)", async () => {
    const key = await keyPair("EdDSA");
    const clientId = await registerKeyClient([key]);
    const once = await assertion(clientId, key);
    expect((await grant(once)).status).toBe(200);
    const again = await grant(once);
    expect(again.status).toBe(400);
    expect(again.json).toMatchObject({ error: "invalid_client" });
  });

  it("forgets a spent assertion's record only once the assertion expired", async () => {
    const key = await keyPair("ES256");
    const clientId = await registerKeyClient([key]);
    // An expiry second of its own: other test files share the database (and its single-use records) on PostgreSQL.
    const exp = Math.floor(Date.now() / 1000) + 60 + Math.floor(Math.random() * 200);
    expect((await grant(await assertion(clientId, key, { exp }))).status).toBe(200);
    const count = async () => Number((await server.db.selectFrom("oauthClientAssertion").select((eb) => eb.fn.countAll().as("n")).where("expiresAt", "=", new Date(exp * 1000)).executeTakeFirstOrThrow()).n);
    const before = await count();
    expect(before).toBeGreaterThanOrEqual(1);
    // Not yet expired: kept (it still guards against a replay).
    await deleteExpiredClientAssertions(server.db, new Date());
    expect(await count()).toBe(before);
    // Expired: gone, and nothing of it is needed, since an expired assertion is refused for its exp.
    expect(await deleteExpiredClientAssertions(server.db, new Date((exp + 120) * 1000))).toBeGreaterThanOrEqual(1);
    expect(await count()).toBe(0);
  });

  it("refuses a secret from a client registered for keys", async () => {
    const key = await keyPair("ES256");
    const clientId = await registerKeyClient([key]);
    const res = await token(server, { grant_type: "client_credentials", client_id: clientId, client_secret: "guess" });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(res.json.error).toBe("invalid_client");
  });
});

describe("a replayed assertion across instances", () => {
  let other: TestServer;
  beforeAll(async () => {
    // A second instance of the same deployment: same issuer (AUTH_URL) and database, its own port and caches.
    const database = server.config.database;
    other = await startTestServer({ AUTH_URL: server.url, PORT: "0", DATABASE_URL: database.kind === "sqlite" ? database.file : database.url });
  });
  afterAll(async () => {
    await other?.close();
  });

  it("refuses on one instance the assertion the other accepted", async () => {
    const key = await keyPair("ES256");
    const clientId = await registerKeyClient([key]);
    const once = await assertion(clientId, key);
    expect((await grant(once)).status).toBe(200);
    const again = await postForm(other.local, "/api/auth/oauth2/token", { grant_type: "client_credentials", client_assertion_type: ASSERTION_TYPE, client_assertion: once });
    expect(again.status).toBe(400);
    expect(again.json).toMatchObject({ error: "invalid_client" });
    // A fresh assertion is accepted there: the refusal is the replay, not the instance.
    const fresh = await postForm(other.local, "/api/auth/oauth2/token", { grant_type: "client_credentials", client_assertion_type: ASSERTION_TYPE, client_assertion: await assertion(clientId, key) });
    expect(fresh.status, fresh.text).toBe(200);
  });
});
