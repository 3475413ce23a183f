import * as oidc from "openid-client";
import { beforeAll, describe, expect, it } from "vitest";
import { useTestServer } from "../helpers/fixtures.js";
import { ath, proof, proofKey, serverNonce, type ProofKey } from "../helpers/dpop.js";
import { authorize, pkce, REDIRECT, registerClient, signUp, token } from "../helpers/oauth.js";

/**
 * RFC 9449 §7 at our own resources that take OAuth access tokens: /mcp, userinfo and the backup
 * routes accept `Authorization: DPoP <token>` with a proof over the token (`ath`), and refuse a
 * bound token sent as `Bearer` or without its proof: 401 with a `DPoP` challenge.
 */

const server = useTestServer();
/** The server nonce (RFC 9449 §8) proofs carry here, learnt as a client learns it. */
let nonce: string;
beforeAll(async () => {
  nonce = await serverNonce(server);
});

const SCOPE = "openid profile offline_access backup:read";
const ACCEPT = "application/json, text/event-stream";
const TOOLS_LIST = { jsonrpc: "2.0", id: 1, method: "tools/list" };

/** A public client's access token bound to `key`, for `resource` (a JWT) or for us (opaque). */
async function boundToken(key: ProofKey, resource?: string) {
  const client = await registerClient(server, { scope: SCOPE });
  const person = await signUp(server);
  const { verifier, challenge } = pkce();
  const extra = resource ? { resource } : undefined;
  const auth = await authorize(server, { clientId: client.client_id, cookie: person.cookie, challenge, scope: SCOPE, extra });
  const form = { grant_type: "authorization_code", code: auth.code!, redirect_uri: REDIRECT, client_id: client.client_id, code_verifier: verifier, ...(resource ? { resource } : {}) };
  const res = await token(server, form, { dpop: await proof(key, "POST", `${server.url}/api/auth/oauth2/token`, { nonce }) });
  expect(res.status, res.text).toBe(200);
  expect(res.json.token_type).toBe("DPoP");
  return res.json.access_token as string;
}

/** A proof for a resource request: over `accessToken` (ath) and with the server nonce, unless `claims` say otherwise. */
const resourceProof = (key: ProofKey, htm: string, path: string, accessToken: string, claims: Record<string, unknown> = {}) =>
  proof(key, htm, `${server.url}${path}`, { ath: ath(accessToken), nonce, ...claims });

function expectDpopChallenge(res: { status: number; headers: Headers }, error: string) {
  expect(res.status).toBe(401);
  expect(res.headers.get("www-authenticate")).toMatch(new RegExp(`^DPoP error="${error}"`));
}

describe("/mcp", () => {
  const mcp = (headers: Record<string, string>) => server.api("/mcp", { body: TOOLS_LIST, headers: { accept: ACCEPT, ...headers } });

  it("its resource metadata (RFC 9728) lists the DPoP algorithms it takes", async () => {
    const res = await server.api("/.well-known/oauth-protected-resource/mcp");
    expect([...res.json.dpop_signing_alg_values_supported].sort()).toEqual(["ES256", "ES256K", "EdDSA"]);
  });

  it("takes a bound token with the DPoP scheme and a proof by its key (ES256K)", async () => {
    const key = await proofKey("ES256K");
    const at = await boundToken(key, `${server.url}/mcp`);
    const res = await mcp({ authorization: `DPoP ${at}`, dpop: await resourceProof(key, "POST", "/mcp", at) });
    expect(res.status, res.text).toBe(200);
    expect(res.json.result.tools.length).toBeGreaterThan(0);
  });

  it("refuses a bound token as Bearer, without a proof, with another key, over another token, replayed, or without a nonce", async () => {
    const key = await proofKey("ES256");
    const at = await boundToken(key, `${server.url}/mcp`);
    expectDpopChallenge(await mcp({ authorization: `Bearer ${at}` }), "invalid_token");
    expectDpopChallenge(await mcp({ authorization: `Bearer ${at}`, dpop: await resourceProof(key, "POST", "/mcp", at) }), "invalid_token");
    expectDpopChallenge(await mcp({ authorization: `DPoP ${at}` }), "invalid_dpop_proof");
    expectDpopChallenge(await mcp({ authorization: `DPoP ${at}`, dpop: await resourceProof(await proofKey("ES256"), "POST", "/mcp", at) }), "invalid_dpop_proof");
    expectDpopChallenge(await mcp({ authorization: `DPoP ${at}`, dpop: await resourceProof(key, "POST", "/mcp", at, { ath: ath("another token") }) }), "invalid_dpop_proof");
    expectDpopChallenge(await mcp({ authorization: `DPoP ${at}`, dpop: await resourceProof(key, "POST", "/mcp", at, { ath: undefined }) }), "invalid_dpop_proof");
    expectDpopChallenge(await mcp({ authorization: `DPoP ${at}`, dpop: await resourceProof(key, "GET", "/mcp", at) }), "invalid_dpop_proof");
    const once = await resourceProof(key, "POST", "/mcp", at);
    expect((await mcp({ authorization: `DPoP ${at}`, dpop: once })).status).toBe(200);
    expectDpopChallenge(await mcp({ authorization: `DPoP ${at}`, dpop: once }), "invalid_dpop_proof");
    const unnonced = await mcp({ authorization: `DPoP ${at}`, dpop: await resourceProof(key, "POST", "/mcp", at, { nonce: undefined }) });
    expectDpopChallenge(unnonced, "use_dpop_nonce");
    expect(unnonced.headers.get("dpop-nonce")).toBeTruthy();
  });
});

describe("userinfo", () => {
  it("openid-client's DPoP handle reads userinfo with a bound token (the nonce learnt on the way)", async () => {
    const client = await registerClient(server, { scope: SCOPE });
    const config = await oidc.discovery(new URL(server.url), client.client_id, undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] });
    const DPoP = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair("ES256"));
    const person = await signUp(server);
    const { verifier, challenge } = pkce();
    const auth = await authorize(server, { clientId: client.client_id, cookie: person.cookie, challenge, scope: SCOPE });
    const tokens = await oidc.authorizationCodeGrant(config, auth.url, { pkceCodeVerifier: verifier, expectedState: auth.state, expectedNonce: auth.nonce }, undefined, { DPoP });
    expect(tokens.token_type).toBe("dpop");
    const info = await oidc.fetchUserInfo(config, tokens.access_token, tokens.claims()!.sub, { DPoP });
    expect(info.sub).toBe(person.user.id);
  });

  it("refuses a bound token as Bearer or without its proof, with a DPoP challenge", async () => {
    const key = await proofKey("ES256K");
    const at = await boundToken(key);
    const path = "/api/auth/oauth2/userinfo";
    expectDpopChallenge(await server.api(path, { headers: { authorization: `Bearer ${at}` } }), "invalid_token");
    expectDpopChallenge(await server.api(path, { headers: { authorization: `DPoP ${at}` } }), "invalid_dpop_proof");
    const unnonced = await server.api(path, { headers: { authorization: `DPoP ${at}`, dpop: await resourceProof(key, "GET", path, at, { nonce: undefined }) } });
    expectDpopChallenge(unnonced, "use_dpop_nonce");
    expect(unnonced.json.error).toBe("use_dpop_nonce");
    expect(unnonced.headers.get("dpop-nonce")).toBeTruthy();
    const res = await server.api(path, { headers: { authorization: `DPoP ${at}`, dpop: await resourceProof(key, "GET", path, at) } });
    expect(res.status, res.text).toBe(200);
  });
});

describe("/api/backup", () => {
  const path = "/api/backup/status";

  it("takes a bound token with its proof, and refuses it as Bearer or without the proof", async () => {
    const key = await proofKey("ES256K");
    const at = await boundToken(key);
    const ok = await server.api(path, { headers: { authorization: `DPoP ${at}`, dpop: await resourceProof(key, "GET", path, at) } });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json).toMatchObject({ hasBackup: false });
    for (const headers of [{ authorization: `Bearer ${at}` }, { authorization: `DPoP ${at}` }]) {
      const res = await server.api(path, { headers });
      expectDpopChallenge(res, headers.authorization.startsWith("Bearer") ? "invalid_token" : "invalid_dpop_proof");
      expect(res.headers.get("content-type")).toContain("application/problem+json");
    }
  });
});
