import { createHash, randomBytes } from "node:crypto";
import { createLocalJWKSet, decodeJwt, jwtVerify } from "jose";
import { describe, expect, it } from "vitest";
import { useTestServer } from "../helpers/fixtures.js";
import { registerClient, signUp, token } from "../helpers/oauth.js";
import { freePort } from "../helpers/server.js";

/**
 * The fast refresh grant under an issuer with a path (AUTH_URL=http://host/idp): there the fast
 * lane in front of the app is off and the same answerer runs inside the auth handler
 * (`withFastRefresh`, auth.config.ts). The refresh tokens are written straight into
 * oauth-provider's table, as its code exchange stores them (a code flow through the test
 * helpers does not run under a path); each grant is then refreshed both ways, the generic
 * endpoint reached with a form field the fast path does not take (`x`).
 */
const server = useTestServer(async () => {
  const port = await freePort();
  return { PORT: String(port), AUTH_URL: `http://127.0.0.1:${port}/idp` };
});
const sha256 = (value: string) => createHash("sha256").update(value).digest("base64url");
const basicAuth = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString("base64")}`;

async function grant() {
  const person = await signUp(server);
  const client = await registerClient(server, { application_type: "web", token_endpoint_auth_method: "client_secret_basic", redirect_uris: ["https://rp.example.com/callback"], grant_types: ["authorization_code", "refresh_token"] });
  const refreshToken = randomBytes(24).toString("base64url");
  const now = new Date();
  await server.db
    .insertInto("oauthRefreshToken")
    .values({
      id: randomBytes(16).toString("hex"),
      token: sha256(refreshToken),
      clientId: client.client_id,
      userId: person.user.id,
      scopes: JSON.stringify(["openid", "offline_access"]),
      authTime: now,
      createdAt: now,
      expiresAt: new Date(now.getTime() + 86_400_000),
    })
    .execute();
  return { auth: basicAuth(client.client_id, client.client_secret!), refreshToken, person, client };
}

describe("fast refresh grant under an issuer with a path", () => {
  it("answers as oauth-provider does, with ID tokens its JWKS verifies", async () => {
    const fast = await grant();
    const slow = await grant();
    const a = await token(server, { grant_type: "refresh_token", refresh_token: fast.refreshToken }, { authorization: fast.auth });
    const b = await token(server, { grant_type: "refresh_token", refresh_token: slow.refreshToken, x: "generic" }, { authorization: slow.auth });
    expect(a.status, a.text).toBe(200);
    expect(b.status, b.text).toBe(200);
    expect(Object.keys(a.json)).toEqual(Object.keys(b.json));
    for (const field of ["token_type", "scope", "expires_in"]) expect(a.json[field], field).toEqual(b.json[field]);
    for (const name of ["content-type", "cache-control", "pragma"]) expect(a.headers.get(name), name).toBe(b.headers.get(name));
    const keys = createLocalJWKSet((await (await fetch(`${server.url}/api/auth/jwks`)).json()) as Parameters<typeof createLocalJWKSet>[0]);
    const [ca, cb] = [decodeJwt(a.json.id_token), decodeJwt(b.json.id_token)];
    for (const [idToken, audience] of [[a.json.id_token, fast.client.client_id], [b.json.id_token, slow.client.client_id]]) await expect(jwtVerify(idToken, keys, { issuer: server.url, audience })).resolves.toBeTruthy();
    expect(Object.keys(ca).sort()).toEqual(Object.keys(cb).sort());
    expect(ca).toMatchObject({ iss: server.url, sub: fast.person.user.id, acr: "0" });
    // The rotation happened: the presented token is spent either way.
    const again = await token(server, { grant_type: "refresh_token", refresh_token: fast.refreshToken }, { authorization: fast.auth });
    expect(again.status).toBe(400);
    expect(again.json).toMatchObject({ error: "invalid_grant" });
  });
});
