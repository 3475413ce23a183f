import { exportJWK, generateKeyPair, SignJWT } from "jose";
import * as oidc from "openid-client";
import { beforeAll, describe, expect, it } from "vitest";
import { useTestServer } from "../helpers/fixtures.js";
import { claimsOf, proof, proofKey, serverNonce, thumbprint, type ProofKey } from "../helpers/dpop.js";
import { authorize, pkce, REDIRECT, registerClient, signUp, token } from "../helpers/oauth.js";
import { postForm, startTestServer, type TestServer } from "../helpers/server.js";

/**
 * RFC 9449 DPoP at the token endpoint, black-box: proofs with ES256, EdDSA and ES256K (a Bitcoin
 * key) bind the access token (`cnf.jkt`, `token_type: DPoP`) and a public client's refresh token
 * to the proof key; `htm`, `htu`, `iat` and single use of `jti` are checked, across instances too.
 */

const server = useTestServer();
/** The server nonce (RFC 9449 §8) proofs carry here, learnt as a client learns it. */
let nonce: string;
beforeAll(async () => {
  nonce = await serverNonce(server);
});

const SCOPE = "openid profile offline_access";
const tokenUrl = (s: TestServer = server) => `${s.url}/api/auth/oauth2/token`;
const mcp = () => `${server.url}/mcp`;
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`;

/** A person's authorization code for `clientId` (PKCE), optionally for a resource (then the access token is a JWT). */
async function code(clientId: string, opts: { resource?: string; redirectUri?: string } = {}) {
  const person = await signUp(server);
  const { verifier, challenge } = pkce();
  const extra = opts.resource ? { resource: opts.resource } : undefined;
  const auth = await authorize(server, { clientId, cookie: person.cookie, challenge, scope: SCOPE, extra, redirectUri: opts.redirectUri });
  expect(auth.code, auth.url.toString()).toBeTruthy();
  return { ...auth, verifier, person };
}

/** A public client's code redeemed with a proof by `key`. */
async function boundTokens(key: ProofKey, opts: { resource?: string } = {}) {
  const client = await registerClient(server);
  const auth = await code(client.client_id, opts);
  const form = { grant_type: "authorization_code", code: auth.code!, redirect_uri: REDIRECT, client_id: client.client_id, code_verifier: auth.verifier, ...(opts.resource ? { resource: opts.resource } : {}) };
  const dpop = await proof(key, "POST", tokenUrl(), { nonce });
  const res = await token(server, form, { dpop });
  expect(res.status, res.text).toBe(200);
  return { client, dpop, tokens: res.json as { access_token: string; refresh_token: string; token_type: string; id_token: string } };
}

function refresh(clientId: string, refreshToken: string, headers: Record<string, string> = {}) {
  return token(server, { grant_type: "refresh_token", refresh_token: refreshToken, client_id: clientId }, headers);
}

describe("discovery", () => {
  it("lists exactly the DPoP algorithms that work: ES256, EdDSA and ES256K", async () => {
    for (const path of ["/.well-known/openid-configuration", "/.well-known/oauth-authorization-server"]) {
      const res = await server.api(path);
      expect(res.status).toBe(200);
      expect([...res.json.dpop_signing_alg_values_supported].sort()).toEqual(["ES256", "ES256K", "EdDSA"]);
    }
  });
});

describe("binding at the token endpoint", () => {
  it.each(["ES256", "EdDSA"])("openid-client's DPoP handle (%s): code grant and refresh give DPoP tokens bound to its key", async (alg) => {
    const client = await registerClient(server);
    const config = await oidc.discovery(new URL(server.url), client.client_id, undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] });
    const keyPair = await oidc.randomDPoPKeyPair(alg);
    // openid-client names an Ed25519 key's algorithm "Ed25519" (RFC 9864); the discovery list says
    // EdDSA, so the client remaps it as openid-client documents (`modifyAssertion`).
    const DPoP = oidc.getDPoPHandle(config, keyPair, {
      [oidc.modifyAssertion]: (header: Record<string, unknown>) => {
        if (header.alg === "Ed25519") header.alg = "EdDSA";
      },
    });
    const jkt = await thumbprint({ jwk: await crypto.subtle.exportKey("jwk", keyPair.publicKey) as never });
    const auth = await code(client.client_id, { resource: mcp() });
    const tokens = await oidc.authorizationCodeGrant(config, auth.url, { pkceCodeVerifier: auth.verifier, expectedState: auth.state, expectedNonce: auth.nonce }, { resource: mcp() }, { DPoP });
    expect(tokens.token_type).toBe("dpop");
    expect(claimsOf(tokens.access_token).cnf).toEqual({ jkt });
    const again = await oidc.refreshTokenGrant(config, tokens.refresh_token!, undefined, { DPoP });
    expect(again.token_type).toBe("dpop");
    expect(claimsOf(again.access_token).cnf).toEqual({ jkt });
  });

  it("an ES256K proof from a Bitcoin key binds the tokens to that key", async () => {
    const key = await proofKey("ES256K");
    const { client, tokens } = await boundTokens(key, { resource: mcp() });
    expect(tokens.token_type).toBe("DPoP");
    expect(claimsOf(tokens.access_token).cnf).toEqual({ jkt: await thumbprint(key) });
    const res = await refresh(client.client_id, tokens.refresh_token, { dpop: await proof(key, "POST", tokenUrl(), { nonce }) });
    expect(res.status, res.text).toBe(200);
    expect(res.json.token_type).toBe("DPoP");
  });

  it("an ES256K proof signed by another key than its header's is refused", async () => {
    const key = await proofKey("ES256K");
    const other = await proofKey("ES256K");
    const client = await registerClient(server);
    const auth = await code(client.client_id);
    const forged = await other.sign({ typ: "dpop+jwt", jwk: key.jwk }, { htm: "POST", htu: tokenUrl(), iat: Math.floor(Date.now() / 1000), jti: crypto.randomUUID(), nonce });
    const res = await token(server, { grant_type: "authorization_code", code: auth.code!, redirect_uri: REDIRECT, client_id: client.client_id, code_verifier: auth.verifier }, { dpop: forged });
    expect(res.status).toBe(400);
    expect(res.json.error).toBe("invalid_dpop_proof");
  });

  it("a public client's refresh token is bound: refused without a proof or with another key", async () => {
    const key = await proofKey("ES256");
    const { client, tokens } = await boundTokens(key);
    const attempts: Record<string, string>[] = [{}, { dpop: await proof(await proofKey("ES256"), "POST", tokenUrl(), { nonce }) }, { dpop: await proof(await proofKey("ES256K"), "POST", tokenUrl(), { nonce }) }];
    for (const headers of attempts) {
      const res = await refresh(client.client_id, tokens.refresh_token, headers);
      expect(res.status, res.text).toBe(400);
      expect(res.json.error).toBe("invalid_dpop_proof");
    }
    const res = await refresh(client.client_id, tokens.refresh_token, { dpop: await proof(key, "POST", tokenUrl(), { nonce }) });
    expect(res.status, res.text).toBe(200);
  });

  it("the fast refresh lane never redeems a bound refresh token without its proof", async () => {
    const key = await proofKey("EdDSA");
    const client = await registerClient(server, { application_type: "web", token_endpoint_auth_method: "client_secret_basic" });
    const authorization = basic(client.client_id, client.client_secret!);
    const auth = await code(client.client_id);
    const first = await token(server, { grant_type: "authorization_code", code: auth.code!, redirect_uri: REDIRECT, code_verifier: auth.verifier }, { authorization, dpop: await proof(key, "POST", tokenUrl(), { nonce }) });
    expect(first.status, first.text).toBe(200);
    // Exactly the lane's common case (Basic credentials, refresh_token only) but for the binding.
    const res = await token(server, { grant_type: "refresh_token", refresh_token: first.json.refresh_token }, { authorization });
    expect(res.status, res.text).toBe(400);
    expect(res.json.error).toBe("invalid_dpop_proof");
    const bound = await token(server, { grant_type: "refresh_token", refresh_token: first.json.refresh_token }, { authorization, dpop: await proof(key, "POST", tokenUrl(), { nonce }) });
    expect(bound.status, bound.text).toBe(200);
    expect(bound.json.token_type).toBe("DPoP");
  });

  it("the device code grant (RFC 8628) gives tokens bound to the proof key", async () => {
    const grant = "urn:ietf:params:oauth:grant-type:device_code";
    const key = await proofKey("ES256K");
    const client = await registerClient(server, { redirect_uris: undefined, application_type: undefined, grant_types: [grant], response_types: [], token_endpoint_auth_method: "none" });
    const code = await postForm(server, "/api/auth/device/code", { client_id: client.client_id, scope: "openid profile" });
    expect(code.status, code.text).toBe(200);
    const person = await signUp(server);
    expect((await server.api(`/api/auth/device?user_code=${code.json.user_code}`, { cookie: person.cookie })).status).toBe(200);
    const approved = await server.api("/api/auth/device/approve", { cookie: person.cookie, body: { userCode: code.json.user_code } });
    expect(approved.status, approved.text).toBe(200);
    const res = await token(server, { grant_type: grant, device_code: code.json.device_code, client_id: client.client_id }, { dpop: await proof(key, "POST", tokenUrl(), { nonce }) });
    expect(res.status, res.text).toBe(200);
    expect(res.json.token_type).toBe("DPoP");
  });

  it("introspection reports the binding of opaque and JWT access tokens", async () => {
    const key = await proofKey("ES256K");
    const client = await registerClient(server, { application_type: "web", token_endpoint_auth_method: "client_secret_basic" });
    const authorization = basic(client.client_id, client.client_secret!);
    for (const resource of [undefined, mcp()]) {
      const auth = await code(client.client_id, { resource });
      const res = await token(server, { grant_type: "authorization_code", code: auth.code!, redirect_uri: REDIRECT, code_verifier: auth.verifier, ...(resource ? { resource } : {}) }, { authorization, dpop: await proof(key, "POST", tokenUrl(), { nonce }) });
      expect(res.status, res.text).toBe(200);
      const intro = await postForm(server, "/api/auth/oauth2/introspect", { token: res.json.access_token }, { authorization });
      expect(intro.status, intro.text).toBe(200);
      expect(intro.json).toMatchObject({ active: true, token_type: "DPoP", cnf: { jkt: await thumbprint(key) } });
    }
  });
});

/** A well-formed proof signed with RS256 (jose), an algorithm outside DPOP_ALGORITHMS. */
async function rsaProof(htu: string) {
  const { privateKey, publicKey } = await generateKeyPair("RS256");
  const jwk = await exportJWK(publicKey);
  return new SignJWT({ htm: "POST", htu, iat: Math.floor(Date.now() / 1000), jti: crypto.randomUUID(), nonce }).setProtectedHeader({ alg: "RS256", typ: "dpop+jwt", jwk }).sign(privateKey);
}

describe("proof checks", () => {
  const now = () => Math.floor(Date.now() / 1000);
  it.each([
    ["another method (htm)", (key: ProofKey) => proof(key, "GET", tokenUrl(), { nonce })],
    ["another URL (htu)", (key: ProofKey) => proof(key, "POST", `${server.url}/api/auth/oauth2/introspect`, { nonce })],
    ["an old iat", (key: ProofKey) => proof(key, "POST", tokenUrl(), { nonce, iat: now() - 600 })],
    ["an iat in the future", (key: ProofKey) => proof(key, "POST", tokenUrl(), { nonce, iat: now() + 600 })],
    ["no jti", (key: ProofKey) => proof(key, "POST", tokenUrl(), { nonce, jti: undefined })],
    ["RS256, which oauth-provider takes by default but we do not list", () => rsaProof(tokenUrl())],
  ])("a proof with %s is refused", async (_, make: (key: ProofKey) => Promise<string>) => {
    const key = await proofKey("ES256");
    const client = await registerClient(server);
    const auth = await code(client.client_id);
    const res = await token(server, { grant_type: "authorization_code", code: auth.code!, redirect_uri: REDIRECT, client_id: client.client_id, code_verifier: auth.verifier }, { dpop: await make(key) });
    expect(res.status, res.text).toBe(400);
    expect(res.json.error).toBe("invalid_dpop_proof");
  });

  it("a proof is used once: replayed at the token endpoint it is refused, a refresh included", async () => {
    const key = await proofKey("ES256K");
    const { client, tokens, dpop } = await boundTokens(key);
    const replayed = await refresh(client.client_id, tokens.refresh_token, { dpop });
    expect(replayed.status, replayed.text).toBe(400);
    expect(replayed.json).toMatchObject({ error: "invalid_dpop_proof", error_description: expect.stringMatching(/jti/) });
    const fresh = await refresh(client.client_id, tokens.refresh_token, { dpop: await proof(key, "POST", tokenUrl(), { nonce }) });
    expect(fresh.status, fresh.text).toBe(200);
  });

  // Several instances share their replay records through Redis (collaborators.ts).
  it.runIf(Boolean(process.env.TEST_REDIS_URL))("a proof used at one instance is refused at another instance of the deployment", async () => {
    const database = server.config.database;
    const other = await startTestServer({ AUTH_URL: server.url, PORT: "0", DATABASE_URL: database.kind === "sqlite" ? database.file : database.url });
    try {
      const key = await proofKey("ES256K");
      const { client, tokens, dpop } = await boundTokens(key);
      // Sent to the other instance's own address: the proof names the public URL (AUTH_URL) all the same.
      const viaOther = { url: other.local.url };
      const form = { grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: client.client_id };
      const replayed = await postForm(viaOther, "/api/auth/oauth2/token", form, { dpop });
      expect(replayed.status, replayed.text).toBe(400);
      expect(replayed.json.error_description).toMatch(/jti/);
      const fresh = await postForm(viaOther, "/api/auth/oauth2/token", form, { dpop: await proof(key, "POST", tokenUrl(), { nonce }) });
      expect(fresh.status, fresh.text).toBe(200);
    } finally {
      await other.close();
    }
  });
});


describe("server nonces (RFC 9449 §8)", () => {
  it("a proof without a nonce is answered use_dpop_nonce with the nonce to use, which then works", async () => {
    const key = await proofKey("ES256K");
    const client = await registerClient(server);
    const auth = await code(client.client_id);
    const form = { grant_type: "authorization_code", code: auth.code!, redirect_uri: REDIRECT, client_id: client.client_id, code_verifier: auth.verifier };
    const asked = await token(server, form, { dpop: await proof(key, "POST", tokenUrl()) });
    expect(asked.status, asked.text).toBe(400);
    expect(asked.json.error).toBe("use_dpop_nonce");
    expect(asked.headers.get("cache-control")).toContain("no-store");
    const given = asked.headers.get("dpop-nonce");
    expect(given).toBeTruthy();
    const res = await token(server, form, { dpop: await proof(key, "POST", tokenUrl(), { nonce: given }) });
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get("dpop-nonce")).toBeTruthy();
  });

  it("a nonce this server did not make is refused", async () => {
    const key = await proofKey("ES256");
    const client = await registerClient(server);
    const auth = await code(client.client_id);
    const forged = `${nonce.split(".")[0]}.${"A".repeat(32)}`;
    const res = await token(server, { grant_type: "authorization_code", code: auth.code!, redirect_uri: REDIRECT, client_id: client.client_id, code_verifier: auth.verifier }, { dpop: await proof(key, "POST", tokenUrl(), { nonce: forged }) });
    expect(res.status, res.text).toBe(400);
    expect(res.json.error).toBe("use_dpop_nonce");
  });

  it("a stale nonce is refused, and a fresh one is given", async () => {
    const short = await startTestServer({ DPOP_NONCE_LIFETIME: "1" });
    try {
      const key = await proofKey("EdDSA");
      const stale = await serverNonce(short);
      await new Promise((resolve) => setTimeout(resolve, 2100));
      const client = await registerClient(short);
      const person = await signUp(short);
      const { verifier, challenge } = pkce();
      const auth = await authorize(short, { clientId: client.client_id, cookie: person.cookie, challenge, scope: SCOPE });
      const form = { grant_type: "authorization_code", code: auth.code!, redirect_uri: REDIRECT, client_id: client.client_id, code_verifier: verifier };
      const url = `${short.url}/api/auth/oauth2/token`;
      const res = await token(short, form, { dpop: await proof(key, "POST", url, { nonce: stale }) });
      expect(res.status, res.text).toBe(400);
      expect(res.json.error).toBe("use_dpop_nonce");
      const fresh = res.headers.get("dpop-nonce");
      expect(fresh).not.toBe(stale);
      const ok = await token(short, form, { dpop: await proof(key, "POST", url, { nonce: fresh }) });
      expect(ok.status, ok.text).toBe(200);
    } finally {
      await short.close();
    }
  });
});
