import * as oidc from "openid-client";
import { beforeAll, describe, expect, it } from "vitest";
import { useTestServer } from "../helpers/fixtures.js";
import { ath, claimsOf, proof, proofKey, serverNonce, thumbprint, type ProofKey } from "../helpers/dpop.js";
import { signUp, token } from "../helpers/oauth.js";
import { postForm } from "../helpers/server.js";
import { basic } from "../helpers/token-exchange.js";

/**
 * RFC 9449 DPoP on the client credentials grant (RFC 6749 §4.4): a machine client's token request
 * with a proof gets a token bound to the proof key (`cnf.jkt` in the RFC 9068 JWT for /mcp, in
 * introspection for an opaque one), and /mcp then wants the proof. oauth-provider binds it as for
 * its other grants; plugins/dpop adds ES256K and the server nonce.
 */
const server = useTestServer();
let nonce: string;
beforeAll(async () => {
  nonce = await serverNonce(server);
});

const tokenUrl = () => `${server.url}/api/auth/oauth2/token`;
const mcp = () => `${server.url}/mcp`;
const TOOLS_LIST = { jsonrpc: "2.0", id: 1, method: "tools/list" };
const ACCEPT = "application/json, text/event-stream";
const callMcp = (headers: Record<string, string>) => server.api("/mcp", { body: TOOLS_LIST, headers: { accept: ACCEPT, ...headers } });

/** A machine client registered by a signed-in person (plugins/machine-clients), with its Basic credentials. */
async function machineClient() {
  const person = await signUp(server);
  const res = await server.api("/api/auth/oauth2/register", {
    body: { client_name: "Bound job", grant_types: ["client_credentials"], token_endpoint_auth_method: "client_secret_basic" },
    headers: { cookie: person.cookie },
  });
  expect(res.status, res.text).toBe(201);
  const { client_id: id, client_secret: secret } = res.json as { client_id: string; client_secret: string };
  return { id, secret, headers: basic(id, secret) };
}

const grant = (client: { headers: Record<string, string> }, dpop: string, form: Record<string, string> = {}) =>
  token(server, { grant_type: "client_credentials", ...form }, { ...client.headers, dpop });

describe("DPoP on client credentials", () => {
  it("/llms.txt tells a machine client that a proof binds its token", async () => {
    const text = (await server.api("/llms.txt")).text;
    const section = text.slice(text.indexOf("## Machine clients"), text.indexOf("## Bind tokens to your key"));
    expect(section).toContain("With a DPoP proof on that request");
  });

  it("openid-client's DPoP handle: a JWT for /mcp bound to its key, listed tools only with the proof", async () => {
    const client = await machineClient();
    const config = await oidc.discovery(new URL(server.url), client.id, client.secret, oidc.ClientSecretBasic(client.secret), { execute: [oidc.allowInsecureRequests] });
    const keyPair = await oidc.randomDPoPKeyPair("ES256");
    const DPoP = oidc.getDPoPHandle(config, keyPair);
    const tokens = await oidc.clientCredentialsGrant(config, { resource: mcp() }, { DPoP });
    expect(tokens.token_type).toBe("dpop");
    const jkt = await thumbprint({ jwk: (await crypto.subtle.exportKey("jwk", keyPair.publicKey)) as never });
    expect(claimsOf(tokens.access_token)).toMatchObject({ sub: client.id, aud: mcp(), cnf: { jkt } });
    const listed = await oidc.fetchProtectedResource(config, tokens.access_token, new URL(mcp()), "POST", JSON.stringify(TOOLS_LIST), new Headers({ "content-type": "application/json", accept: ACCEPT }), { DPoP });
    expect(listed.status).toBe(200);
    expect(((await listed.json()) as { result: { tools: { name: string }[] } }).result.tools.map((t) => t.name)).toEqual(["service_info"]);
    const bearer = await callMcp({ authorization: `Bearer ${tokens.access_token}` });
    expect(bearer.status).toBe(401);
    expect(bearer.headers.get("www-authenticate")).toMatch(/^DPoP error="invalid_token"/);
  });

  it("an ES256K proof (a Bitcoin key) binds the JWT for /mcp; /mcp wants that key's proof over that token", async () => {
    const client = await machineClient();
    const key = await proofKey("ES256K");
    const res = await grant(client, await proof(key, "POST", tokenUrl(), { nonce }), { resource: mcp() });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({ token_type: "DPoP", scope: "service:read" });
    const at = res.json.access_token as string;
    expect(claimsOf(at).cnf).toEqual({ jkt: await thumbprint(key) });
    const mcpProof = (k: ProofKey) => proof(k, "POST", mcp(), { ath: ath(at), nonce });
    for (const headers of [{ authorization: `DPoP ${at}` }, { authorization: `DPoP ${at}`, dpop: await mcpProof(await proofKey("ES256K")) }, { authorization: `Bearer ${at}`, dpop: await mcpProof(key) }] as Record<string, string>[]) {
      const refused = await callMcp(headers);
      expect(refused.status).toBe(401);
      expect(refused.headers.get("www-authenticate")).toMatch(/^DPoP error=/);
    }
    const ok = await callMcp({ authorization: `DPoP ${at}`, dpop: await mcpProof(key) });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json.result.tools.map((t: { name: string }) => t.name)).toEqual(["service_info"]);
  });

  it("an opaque token is bound too: introspection reports cnf.jkt and token_type DPoP", async () => {
    const client = await machineClient();
    const key = await proofKey("ES256K");
    const res = await grant(client, await proof(key, "POST", tokenUrl(), { nonce }));
    expect(res.status, res.text).toBe(200);
    expect(res.json.token_type).toBe("DPoP");
    expect(res.json.access_token.split(".")).toHaveLength(1);
    const seen = await postForm(server, "/api/auth/oauth2/introspect", { token: res.json.access_token }, client.headers);
    expect(seen.json).toMatchObject({ active: true, client_id: client.id, token_type: "DPoP", cnf: { jkt: await thumbprint(key) } });
  });

  it("refuses a bad proof (htu, htm, replay) with invalid_dpop_proof and one without the nonce with use_dpop_nonce", async () => {
    const client = await machineClient();
    const key = await proofKey("EdDSA");
    for (const dpop of [await proof(key, "POST", `${server.url}/api/auth/oauth2/introspect`, { nonce }), await proof(key, "GET", tokenUrl(), { nonce })]) {
      const res = await grant(client, dpop);
      expect(res.status, res.text).toBe(400);
      expect(res.json.error).toBe("invalid_dpop_proof");
    }
    const once = await proof(key, "POST", tokenUrl(), { nonce });
    expect((await grant(client, once)).status).toBe(200);
    const replayed = await grant(client, once);
    expect(replayed.status).toBe(400);
    expect(replayed.json.error).toBe("invalid_dpop_proof");
    const unnonced = await grant(client, await proof(key, "POST", tokenUrl()));
    expect(unnonced.status).toBe(400);
    expect(unnonced.json.error).toBe("use_dpop_nonce");
    expect(unnonced.headers.get("dpop-nonce")).toBeTruthy();
  });
});
