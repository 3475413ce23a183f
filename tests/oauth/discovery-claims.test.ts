import { createRemoteJWKSet, jwtVerify } from "jose";
import { describe, expect, it } from "vitest";
import { useTestServer } from "../helpers/fixtures.js";
import { authorize, pkce, REDIRECT, registerClient, signUp, token } from "../helpers/oauth.js";

const server = useTestServer();

describe("discovery", () => {
  for (const doc of ["openid-configuration", "oauth-authorization-server"]) {
    it(`serves /.well-known/${doc} at the root with issuer equal to AUTH_URL`, async () => {
      const res = await server.api(`/.well-known/${doc}`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toContain("application/json");
      const m = res.json;
      expect(m.issuer).toBe(server.url);
      expect(m.authorization_endpoint).toBe(`${server.url}/api/auth/oauth2/authorize`);
      expect(m.token_endpoint).toBe(`${server.url}/api/auth/oauth2/token`);
      expect(m.jwks_uri).toBe(`${server.url}/api/auth/jwks`);
      expect(m.registration_endpoint).toBe(`${server.url}/api/auth/oauth2/register`);
      expect(m.introspection_endpoint).toBe(`${server.url}/api/auth/oauth2/introspect`);
      expect(m.revocation_endpoint).toBe(`${server.url}/api/auth/oauth2/revoke`);
      expect(m.code_challenge_methods_supported).toEqual(["S256"]);
      expect(m.scopes_supported).toEqual(["openid", "profile", "email", "offline_access", "backup:read", "backup:write", "service:read"]);
      expect(m.response_types_supported).toEqual(["code"]);
      expect(m.grant_types_supported).toEqual(["authorization_code", "refresh_token", "client_credentials", "urn:ietf:params:oauth:grant-type:token-exchange", "urn:openid:params:grant-type:ciba", "urn:ietf:params:oauth:grant-type:device_code"]);
      expect(m.device_authorization_endpoint).toBe(`${server.url}/api/auth/device/code`);
      expect(m.authorization_response_iss_parameter_supported).toBe(true);
    });
  }

  it("advertises the OIDC endpoints and the claims we issue", async () => {
    const m = (await server.api("/.well-known/openid-configuration")).json;
    expect(m.userinfo_endpoint).toBe(`${server.url}/api/auth/oauth2/userinfo`);
    expect(m.end_session_endpoint).toBe(`${server.url}/api/auth/oauth2/end-session`);
    for (const claim of ["sub", "bap_id", "bap", "pubkey", "name", "picture", "email", "email_verified"]) expect(m.claims_supported).toContain(claim);
    expect(m.id_token_signing_alg_values_supported).toContain("RS256");
  });

  it("every advertised endpoint answers (none is a 404)", async () => {
    const m = (await server.api("/.well-known/openid-configuration")).json;
    for (const key of ["token_endpoint", "registration_endpoint", "introspection_endpoint", "revocation_endpoint", "backchannel_authentication_endpoint"]) {
      const res = await fetch(m[key], { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", origin: server.url }, body: "" });
      expect(res.status, key).not.toBe(404);
      expect(res.status, key).toBeLessThan(500);
    }
    for (const key of ["jwks_uri", "userinfo_endpoint", "authorization_endpoint", "end_session_endpoint"]) {
      const res = await fetch(m[key], { redirect: "manual" });
      expect(res.status, key).not.toBe(404);
      expect(res.status, key).toBeLessThan(500);
    }
  });

  it("publishes the signing keys as a JWKS without private parts", async () => {
    const res = await server.api("/api/auth/jwks");
    expect(res.status).toBe(200);
    expect(res.json.keys.length).toBeGreaterThan(0);
    for (const key of res.json.keys) {
      expect(key.kid).toBeTruthy();
      expect(key.d).toBeUndefined();
      expect(key.p).toBeUndefined();
    }
  });
});

describe("ID token and userinfo claims", () => {
  async function flow(scope: string, extra?: Record<string, string>) {
    const person = await signUp(server, { name: "Satoshi" });
    const pubkey = "02" + "ab".repeat(32);
    await server.db.updateTable("user").set({ pubkey }).where("id", "=", person.user.id).execute();
    const now = new Date();
    await server.db
      .insertInto("bapIdentity")
      .values({
        id: `bap-${person.user.id}`,
        userId: person.user.id,
        bapId: `Bap${person.user.id}`.slice(0, 30),
        rootAddress: "1RootAddressXXXXXXXXXXXXXXXXXXXXX",
        currentAddress: "1CurrentAddressXXXXXXXXXXXXXXXXXX",
        identity: JSON.stringify({ alternateName: "satoshi" }),
        isPrimary: true,
        createdAt: now,
        updatedAt: now,
      })
      .execute();
    const client = await registerClient(server);
    const { verifier, challenge } = pkce();
    const auth = await authorize(server, { clientId: client.client_id, cookie: person.cookie, challenge, scope, extra });
    const tokens = await token(server, { grant_type: "authorization_code", code: auth.code!, redirect_uri: REDIRECT, client_id: client.client_id, code_verifier: verifier });
    expect(tokens.status).toBe(200);
    const jwks = createRemoteJWKSet(new URL(`${server.url}/api/auth/jwks`));
    const { payload } = await jwtVerify(tokens.json.id_token, jwks, { issuer: server.url, audience: client.client_id });
    const info = await server.api("/api/auth/oauth2/userinfo", { headers: { authorization: `Bearer ${tokens.json.access_token}` } });
    return { person, auth, payload, info, pubkey, bapId: `Bap${person.user.id}`.slice(0, 30) };
  }

  it("carries iss, sub, aud, exp, iat, auth_time, nonce and the selected BAP profile", async () => {
    const { payload, auth, person, pubkey, bapId } = await flow("openid profile email");
    expect(payload.sub).toBe(person.user.id);
    expect(payload.nonce).toBe(auth.nonce);
    for (const claim of ["exp", "iat", "auth_time"]) expect(typeof payload[claim]).toBe("number");
    expect(payload.exp! - payload.iat!).toBe(3600);
    expect(payload.bap_id).toBe(bapId);
    expect(payload.pubkey).toBe(pubkey);
    const bap = JSON.parse(String(payload.bap));
    expect(bap).toEqual({ id: bapId, rootAddress: "1RootAddressXXXXXXXXXXXXXXXXXXXXX", currentAddress: "1CurrentAddressXXXXXXXXXXXXXXXXXX", identity: { alternateName: "satoshi" } });
  });

  it("userinfo returns what the scopes allow", async () => {
    const full = await flow("openid profile email");
    expect(full.info.status).toBe(200);
    expect(full.info.json).toMatchObject({ sub: full.person.user.id, name: "Satoshi", email: full.person.email, email_verified: false, bap_id: full.bapId, pubkey: full.pubkey });
    expect(typeof full.info.json.bap).toBe("string");

    const emailOnly = await flow("openid email");
    expect(emailOnly.info.json.email).toBe(emailOnly.person.email);
    for (const claim of ["name", "bap_id", "bap", "pubkey"]) expect(emailOnly.info.json[claim], claim).toBeUndefined();
    expect(emailOnly.payload.bap_id).toBeUndefined();

    const profileOnly = await flow("openid profile");
    expect(profileOnly.info.json.email).toBeUndefined();
    expect(profileOnly.info.json.bap_id).toBe(profileOnly.bapId);
  });

  it("releases only what the granted scopes allow, whatever the claims parameter asks (OIDC Core §5.5 is not offered)", async () => {
    const claims = JSON.stringify({
      userinfo: { email: { essential: true }, email_verified: null, name: null, picture: null, given_name: null },
      id_token: { email: { essential: true }, name: null },
    });
    const { info, payload, person } = await flow("openid", { claims });
    expect(info.status).toBe(200);
    expect(info.json.sub).toBe(person.user.id);
    for (const claim of ["email", "email_verified", "name", "picture", "given_name", "family_name", "bap_id", "bap", "pubkey"]) {
      expect(info.json[claim], `userinfo ${claim}`).toBeUndefined();
      expect(payload[claim], `id_token ${claim}`).toBeUndefined();
    }
    // The request is not recorded either: the grant and its tokens name no requested claims.
    for (const table of ["oauthConsent", "oauthAccessToken"] as const) {
      const rows = await server.db.selectFrom(table).select("requestedUserInfoClaims").where("userId", "=", person.user.id).execute();
      expect(rows.length, table).toBeGreaterThan(0);
      for (const { requestedUserInfoClaims: v } of rows) expect(typeof v === "string" ? JSON.parse(v) : (v ?? []), table).toEqual([]);
    }
    // With the scope the claim is released as before.
    const withEmail = await flow("openid email", { claims });
    expect(withEmail.info.json.email).toBe(withEmail.person.email);
    expect(withEmail.info.json.name).toBeUndefined();
  });

  it("does not advertise the claims parameter", async () => {
    const m = (await server.api("/.well-known/openid-configuration")).json;
    expect(m.claims_parameter_supported).toBe(false);
  });

  it("refuses userinfo without a valid bearer token", async () => {
    for (const authorization of [undefined, "Bearer nope", "Basic Zm9vOmJhcg==", "Bearer "]) {
      const res = await server.api("/api/auth/oauth2/userinfo", { headers: authorization ? { authorization } : {} });
      expect(res.status, String(authorization)).toBe(401);
      expect(typeof res.json.error).toBe("string");
    }
  });
});
