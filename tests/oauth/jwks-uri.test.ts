import { randomUUID } from "node:crypto";
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey as JoseKey } from "jose";
import * as oidc from "openid-client";
import { describe, expect, it } from "vitest";
import { useTestServer } from "../helpers/fixtures.js";
import { useHttpsServer } from "../helpers/https-server.js";
import { signUp, token } from "../helpers/oauth.js";
import { postForm, type TestServer } from "../helpers/server.js";

/**
 * private_key_jwt with keys at the client's `jwks_uri` (plugins/client-keys): fetched through the
 * guarded fetcher at registration and again when an assertion names a key the stored set lacks
 * (rotation). The client's keys are served by a local HTTPS server on loopback; the server
 * trusts its certificate (OUTBOUND_EXTRA_CA_FILE) and may reach loopback (OUTBOUND_ALLOW_PRIVATE).
 */
const keysHost = useHttpsServer();
const server = useTestServer(() => ({ OUTBOUND_ALLOW_PRIVATE: "true", OUTBOUND_EXTRA_CA_FILE: keysHost.caFile }));
/** The same, without leave to reach loopback: the guarded fetcher's default. */
const guarded = useTestServer(() => ({ OUTBOUND_EXTRA_CA_FILE: keysHost.caFile }));

const ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
const insecure = { execute: [oidc.allowInsecureRequests] };

async function keyPair() {
  const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
  const kid = randomUUID();
  return { kid, privateKey: privateKey as JoseKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: "ES256", use: "sig" } };
}
type Key = Awaited<ReturnType<typeof keyPair>>;

/** Publishes `keys` at a fresh path of the keys host; its URL. */
function publish(path: string, keys: Key[]) {
  keysHost.serve(path, { status: 200, headers: { "content-type": "application/json" }, body: JSON.stringify({ keys: keys.map((k) => k.jwk) }) });
  return `https://localhost:${keysHost.port}${path}`;
}

async function register(target: TestServer, metadata: Record<string, unknown>) {
  const person = await signUp(target);
  return target.api("/api/auth/oauth2/register", {
    body: { client_name: "Key job", grant_types: ["client_credentials"], token_endpoint_auth_method: "private_key_jwt", ...metadata },
    headers: { cookie: person.cookie },
  });
}

function assertion(clientId: string, key: Key) {
  return new SignJWT({ jti: randomUUID() })
    .setProtectedHeader({ alg: "ES256", kid: key.kid })
    .setIssuer(clientId)
    .setSubject(clientId)
    .setAudience(server.url)
    .setIssuedAt()
    .setExpirationTime("60s")
    .sign(key.privateKey);
}

const grant = async (clientId: string, key: Key) =>
  token(server, { grant_type: "client_credentials", client_assertion_type: ASSERTION_TYPE, client_assertion: await assertion(clientId, key) });

const fetchesOf = (path: string) => keysHost.requests.filter((p) => p === path).length;

describe("private_key_jwt with a jwks_uri", () => {
  it("registers the client with its jwks_uri and authenticates openid-client's PrivateKeyJwt", async () => {
    const key = await keyPair();
    const uri = publish("/one/jwks.json", [key]);
    const res = await register(server, { jwks_uri: uri });
    expect(res.status, res.text).toBe(201);
    expect(res.json.jwks_uri).toBe(uri);
    expect(res.json.jwks).toBeUndefined();
    expect(fetchesOf("/one/jwks.json")).toBe(1);
    // oauth-provider's own jwksUri column stays empty: given it, oauth-provider would refetch the
    // set itself with the global fetch, past the guarded fetcher, on an unknown key.
    const row = await server.db.selectFrom("oauthClient").select(["jwksUri", "jwks"]).where("clientId", "=", res.json.client_id).executeTakeFirstOrThrow();
    expect(row.jwksUri).toBeNull();
    expect(JSON.parse(row.jwks!)).toEqual({ keys: [key.jwk] });
    const config = await oidc.discovery(new URL(server.url), res.json.client_id, undefined, oidc.PrivateKeyJwt({ key: key.privateKey as CryptoKey, kid: key.kid }), { ...insecure, algorithm: "oauth2" });
    const tokens = await oidc.clientCredentialsGrant(config, { resource: `${server.url}/mcp` });
    expect(tokens.scope).toBe("service:read");
    // The registration's fetch is still fresh: no second one for a key the set holds.
    expect(fetchesOf("/one/jwks.json")).toBe(1);
  });

  it("honours a rotated key set: a key not in the stored set triggers one refetch", async () => {
    const first = await keyPair();
    const second = await keyPair();
    const uri = publish("/rotating/jwks.json", [first]);
    const res = await register(server, { jwks_uri: uri });
    expect(res.status, res.text).toBe(201);
    const clientId = res.json.client_id as string;
    expect((await grant(clientId, first)).status).toBe(200);
    // The client rotates: only the new key is published now.
    publish("/rotating/jwks.json", [second]);
    const before = fetchesOf("/rotating/jwks.json");
    const rotated = await grant(clientId, second);
    expect(rotated.status, rotated.text).toBe(200);
    expect(fetchesOf("/rotating/jwks.json")).toBe(before + 1);
    // The retired key no longer verifies, and asking again does not refetch (once per 10 s).
    const retired = await grant(clientId, first);
    expect(retired.status).toBeGreaterThanOrEqual(400);
    expect(retired.status).toBeLessThan(500);
    expect(retired.json.error).toBe("invalid_client");
    expect(fetchesOf("/rotating/jwks.json")).toBe(before + 1);
  });

  it("takes new keys by an RFC 7592 update, a jwks_uri or a jwks, and keeps a machine client without redirect URIs", async () => {
    const first = await keyPair();
    const second = await keyPair();
    const third = await keyPair();
    const res = await register(server, { jwks_uri: publish("/updated/jwks.json", [first]) });
    expect(res.status, res.text).toBe(201);
    const { client_id: clientId, registration_client_uri: manageUri, registration_access_token: firstToken } = res.json as Record<string, string>;
    const put = (accessToken: string, body: Record<string, unknown>) =>
      fetch(manageUri!, { method: "PUT", headers: { authorization: `Bearer ${accessToken}`, "content-type": "application/json" }, body: JSON.stringify({ client_id: clientId, client_name: "Key job", grant_types: ["client_credentials"], token_endpoint_auth_method: "private_key_jwt", ...body }) });
    // Another key set at another address: fetched now, and the old keys stop working.
    const moved = await put(firstToken!, { jwks_uri: publish("/moved/jwks.json", [second]) });
    expect(moved.status, await moved.clone().text()).toBe(200);
    const info = (await moved.json()) as Record<string, unknown>;
    expect(info.jwks_uri).toBe(`https://localhost:${keysHost.port}/moved/jwks.json`);
    expect(info.redirect_uris).toEqual([]);
    expect((await grant(clientId!, second)).status).toBe(200);
    expect((await grant(clientId!, first)).json.error).toBe("invalid_client");
    // Keys by value instead: jwks_uri is gone, the inline set is answered.
    const inline = await put(info.registration_access_token as string, { jwks: { keys: [third.jwk] } });
    expect(inline.status).toBe(200);
    const after = (await inline.json()) as Record<string, unknown>;
    expect(after.jwks_uri).toBeUndefined();
    expect(after.jwks).toEqual({ keys: [third.jwk] });
    expect((await grant(clientId!, third)).status).toBe(200);
    // Neither: the client would have no way in.
    const none = await put(after.registration_access_token as string, {});
    expect(none.status).toBe(400);
    expect(((await none.json()) as { error: string }).error).toBe("invalid_client_metadata");
  });

  it("authenticates a client ID metadata document's private_key_jwt keys", async () => {
    const key = await keyPair();
    const stranger = await keyPair();
    const clientId = `https://localhost:${keysHost.port}/cimd/client.json`;
    const document = { client_id: clientId, client_name: "Document client", redirect_uris: ["http://127.0.0.1:9999/callback"], grant_types: ["authorization_code"], response_types: ["code"], token_endpoint_auth_method: "private_key_jwt", jwks: { keys: [key.jwk] } };
    keysHost.serve("/cimd/client.json", { status: 200, headers: { "content-type": "application/json" }, body: JSON.stringify(document) });
    // RFC 7009 revocation authenticates the client first; an unknown token is then still a 200 (§2.2).
    const revoke = async (signer: Key) => {
      const signed = await new SignJWT({ jti: randomUUID() }).setProtectedHeader({ alg: "ES256", kid: key.kid }).setIssuer(clientId).setSubject(clientId).setAudience(server.url).setIssuedAt().setExpirationTime("60s").sign(signer.privateKey);
      return postForm(server, "/api/auth/oauth2/revoke", { token: "not-a-token", client_id: clientId, client_assertion_type: ASSERTION_TYPE, client_assertion: signed });
    };
    const accepted = await revoke(key);
    expect(accepted.status, accepted.text).toBe(200);
    const refused = await revoke(stranger);
    expect(refused.status).toBe(401);
    expect(refused.json.error).toBe("invalid_client");
  });

  it("refuses a jwks_uri that gives no key set, one beside jwks, and one that is not https", async () => {
    const key = await keyPair();
    keysHost.serve("/private/jwks.json", { status: 200, headers: { "content-type": "application/json" }, body: JSON.stringify({ keys: [{ ...key.jwk, d: "c2VjcmV0" }] }) });
    const cases = [
      { jwks_uri: `https://localhost:${keysHost.port}/missing.json` },
      { jwks_uri: `https://localhost:${keysHost.port}/private/jwks.json` },
      { jwks_uri: publish("/both/jwks.json", [key]), jwks: { keys: [key.jwk] } },
      { jwks_uri: "ftp://example.com/jwks.json" },
    ];
    for (const metadata of cases) {
      const res = await register(server, metadata);
      expect(res.status, JSON.stringify(metadata)).toBe(400);
      expect(res.json.error).toBe("invalid_client_metadata");
    }
  });

  it("fetches only through the guarded fetcher: a jwks_uri on loopback is refused by default", async () => {
    const key = await keyPair();
    const res = await register(guarded, { jwks_uri: publish("/loopback/jwks.json", [key]) });
    expect(res.status).toBe(400);
    expect(res.json.error).toBe("invalid_client_metadata");
    expect(res.json.error_description).toMatch(/jwks_uri not fetched/);
    expect(fetchesOf("/loopback/jwks.json")).toBe(0);
  });
});
