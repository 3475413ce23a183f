import * as oidc from "openid-client";
import { beforeAll, describe, expect, it } from "vitest";
import { useTestServer } from "../helpers/fixtures.js";
import { ath, claimsOf, proof, proofKey, serverNonce, thumbprint, type ProofKey } from "../helpers/dpop.js";
import { authorize, pkce, REDIRECT, registerClient, signUp, token } from "../helpers/oauth.js";
import { startTestServer } from "../helpers/server.js";
import { type Agent, exchangeForm, GRANT, introspect, mcp, personsGrant, registerAgent, ACCESS_TOKEN } from "../helpers/token-exchange.js";

/**
 * RFC 9449 DPoP on the token exchange grant (RFC 8693): the agent's proof binds the delegated
 * token to the agent's key (`cnf.jkt`, `token_type: DPoP`), checked as at every other grant, and
 * /mcp then wants the agent's proof; a token bound to the person's app's key is not exchanged.
 */
const server = useTestServer();
let nonce: string;
beforeAll(async () => {
  nonce = await serverNonce(server);
});

const tokenUrl = () => `${server.url}/api/auth/oauth2/token`;
const TOOLS_LIST = { jsonrpc: "2.0", id: 1, method: "tools/list" };
const callMcp = (headers: Record<string, string>) => server.api("/mcp", { body: TOOLS_LIST, headers: { accept: "application/json, text/event-stream", ...headers } });
const mcpProof = (key: ProofKey, accessToken: string) => proof(key, "POST", mcp(server), { ath: ath(accessToken), nonce });

/** An exchange of a person's token for /mcp, with `dpop` as the agent's proof header. */
async function boundExchange(agent: Agent, dpop: string) {
  const grant = await personsGrant(server);
  return exchangeForm(server, agent, grant.accessToken, { resource: mcp(server) }, { dpop });
}

describe("DPoP on token exchange", () => {
  it("/llms.txt tells an agent how to bind a delegated token and how to register without a secret", async () => {
    const text = (await server.api("/llms.txt")).text;
    const section = text.slice(text.indexOf("## Act for a person"));
    expect(section).toContain("send a DPoP proof");
    expect(section).toContain("token_type DPoP with cnf.jkt of your key");
    expect(section).toContain('"token_endpoint_auth_method": "private_key_jwt"');
  });

  it("openid-client's DPoP handle: the delegated JWT is bound to the agent's key and /mcp takes it only with the proof", async () => {
    const grant = await personsGrant(server);
    const agent = await registerAgent(server);
    const keyPair = await oidc.randomDPoPKeyPair("ES256");
    const DPoP = oidc.getDPoPHandle(agent.config, keyPair);
    const res = await oidc.genericGrantRequest(agent.config, GRANT, { subject_token: grant.accessToken, subject_token_type: ACCESS_TOKEN, resource: mcp(server) }, { DPoP });
    expect(res.token_type).toBe("dpop");
    const jkt = await thumbprint({ jwk: (await crypto.subtle.exportKey("jwk", keyPair.publicKey)) as never });
    expect(claimsOf(res.access_token)).toMatchObject({ sub: grant.person.user.id, act: { sub: agent.id }, cnf: { jkt } });
    const listed = await oidc.fetchProtectedResource(agent.config, res.access_token, new URL(mcp(server)), "POST", JSON.stringify(TOOLS_LIST), new Headers({ "content-type": "application/json", accept: "application/json, text/event-stream" }), { DPoP });
    expect(listed.status).toBe(200);
    const bearer = await callMcp({ authorization: `Bearer ${res.access_token}` });
    expect(bearer.status).toBe(401);
    expect(bearer.headers.get("www-authenticate")).toMatch(/^DPoP error="invalid_token"/);
  });

  it("an ES256K proof (a Bitcoin key) binds the delegated token; introspection reports the binding; /mcp wants that key's proof", async () => {
    const agent = await registerAgent(server);
    const key = await proofKey("ES256K");
    const res = await boundExchange(agent, await proof(key, "POST", tokenUrl(), { nonce }));
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({ token_type: "DPoP", issued_token_type: ACCESS_TOKEN });
    const at = res.json.access_token as string;
    expect(claimsOf(at).cnf).toEqual({ jkt: await thumbprint(key) });
    const seen = await introspect(server, agent, at);
    expect(seen.json).toMatchObject({ active: true, token_type: "DPoP", cnf: { jkt: await thumbprint(key) }, act: { sub: agent.id } });
    expect((await callMcp({ authorization: `DPoP ${at}` })).status).toBe(401);
    expect((await callMcp({ authorization: `DPoP ${at}`, dpop: await mcpProof(await proofKey("ES256K"), at) })).status).toBe(401);
    const ok = await callMcp({ authorization: `DPoP ${at}`, dpop: await mcpProof(key, at) });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json.result.tools.length).toBeGreaterThan(0);
  });

  it("an EdDSA proof binds too; without a proof the delegated token stays a Bearer token", async () => {
    const agent = await registerAgent(server);
    const key = await proofKey("EdDSA");
    const bound = await boundExchange(agent, await proof(key, "POST", tokenUrl(), { nonce }));
    expect(bound.status, bound.text).toBe(200);
    expect(claimsOf(bound.json.access_token).cnf).toEqual({ jkt: await thumbprint(key) });
    const grant = await personsGrant(server);
    const plain = await exchangeForm(server, agent, grant.accessToken, { resource: mcp(server) });
    expect(plain.json.token_type).toBe("Bearer");
    expect(claimsOf(plain.json.access_token).cnf).toBeUndefined();
  });

  it.each([
    ["another method (htm)", (key: ProofKey) => proof(key, "GET", tokenUrl(), { nonce })],
    ["another URL (htu)", (key: ProofKey) => proof(key, "POST", `${server.url}/api/auth/oauth2/introspect`, { nonce })],
    ["an old iat", (key: ProofKey) => proof(key, "POST", tokenUrl(), { nonce, iat: Math.floor(Date.now() / 1000) - 600 })],
    ["a signature by another key than its header's", async (key: ProofKey) => (await proofKey("ES256K")).sign({ typ: "dpop+jwt", jwk: key.jwk }, { htm: "POST", htu: tokenUrl(), iat: Math.floor(Date.now() / 1000), jti: crypto.randomUUID(), nonce })],
    ["no typ dpop+jwt", (key: ProofKey) => proof(key, "POST", tokenUrl(), { nonce }, { typ: "JWT" })],
  ])("a proof with %s is refused: invalid_dpop_proof, no token", async (_, make: (key: ProofKey) => Promise<string>) => {
    const agent = await registerAgent(server);
    const res = await boundExchange(agent, await make(await proofKey("ES256K")));
    expect(res.status, res.text).toBe(400);
    expect(res.json.error).toBe("invalid_dpop_proof");
    expect(res.json.access_token).toBeUndefined();
  });

  it("an agent registered with dpop_bound_access_tokens (RFC 9449 §5.2) must send a proof", async () => {
    const client = await registerClient(server, { application_type: "web", token_endpoint_auth_method: "client_secret_basic", grant_types: ["authorization_code", GRANT], dpop_bound_access_tokens: true });
    const agent = { id: client.client_id, secret: client.client_secret! };
    const grant = await personsGrant(server);
    const res = await exchangeForm(server, agent, grant.accessToken, { resource: mcp(server) });
    expect(res.status, res.text).toBe(400);
    expect(res.json.error).toBe("invalid_dpop_proof");
    const bound = await exchangeForm(server, agent, grant.accessToken, { resource: mcp(server) }, { dpop: await proof(await proofKey("ES256K"), "POST", tokenUrl(), { nonce }) });
    expect(bound.status, bound.text).toBe(200);
    expect(bound.json.token_type).toBe("DPoP");
  });

  it("a proof is used once: the same proof at a second exchange is refused", async () => {
    const agent = await registerAgent(server);
    const dpop = await proof(await proofKey("ES256"), "POST", tokenUrl(), { nonce });
    expect((await boundExchange(agent, dpop)).status).toBe(200);
    const replayed = await boundExchange(agent, dpop);
    expect(replayed.status, replayed.text).toBe(400);
    expect(replayed.json).toMatchObject({ error: "invalid_dpop_proof", error_description: expect.stringMatching(/jti/) });
  });

  // Several instances share their replay records through Redis (collaborators.ts).
  it.runIf(Boolean(process.env.TEST_REDIS_URL))("a proof used at one instance is refused at another; a fresh one naming the public URL works there", async () => {
    const database = server.config.database;
    const other = await startTestServer({ AUTH_URL: server.url, PORT: "0", DATABASE_URL: database.kind === "sqlite" ? database.file : database.url });
    try {
      const agent = await registerAgent(server);
      const key = await proofKey("ES256K");
      const dpop = await proof(key, "POST", tokenUrl(), { nonce });
      expect((await boundExchange(agent, dpop)).status).toBe(200);
      const grant = await personsGrant(server);
      // Sent to the other instance's own address: the proof names the public URL (AUTH_URL) all the same.
      const viaOther = (header: string) => exchangeForm({ url: other.local.url }, agent, grant.accessToken, { resource: mcp(server) }, { dpop: header });
      const replayed = await viaOther(dpop);
      expect(replayed.status, replayed.text).toBe(400);
      expect(replayed.json.error).toBe("invalid_dpop_proof");
      const fresh = await viaOther(await proof(key, "POST", tokenUrl(), { nonce }));
      expect(fresh.status, fresh.text).toBe(200);
      expect(fresh.json.token_type).toBe("DPoP");
    } finally {
      await other.close();
    }
  });

  it("a proof without the server nonce, or with a forged one, is answered use_dpop_nonce with the nonce to use", async () => {
    const agent = await registerAgent(server);
    const key = await proofKey("ES256K");
    for (const claims of [{}, { nonce: `${nonce.split(".")[0]}.${"A".repeat(32)}` }]) {
      const res = await boundExchange(agent, await proof(key, "POST", tokenUrl(), claims));
      expect(res.status, res.text).toBe(400);
      expect(res.json.error).toBe("use_dpop_nonce");
      expect(res.headers.get("dpop-nonce")).toBeTruthy();
    }
  });

  it("a subject token bound to a key (the person's app's) is not exchanged, with or without the agent's proof", async () => {
    const person = await signUp(server);
    const app = await registerClient(server, { client_name: "Bound App" });
    const { verifier, challenge } = pkce();
    const auth = await authorize(server, { clientId: app.client_id, cookie: person.cookie, scope: "openid profile", extra: { code_challenge: challenge } });
    const appKey = await proofKey("ES256");
    const form = { grant_type: "authorization_code", code: auth.code!, redirect_uri: REDIRECT, client_id: app.client_id, code_verifier: verifier };
    const bound = await token(server, form, { dpop: await proof(appKey, "POST", tokenUrl(), { nonce }) });
    expect(bound.status, bound.text).toBe(200);
    expect(bound.json.token_type).toBe("DPoP");
    const agent = await registerAgent(server);
    for (const headers of [{}, { dpop: await proof(appKey, "POST", tokenUrl(), { nonce }) }] as Record<string, string>[]) {
      const res = await exchangeForm(server, agent, bound.json.access_token, { resource: mcp(server) }, headers);
      expect(res.status, res.text).toBe(400);
      expect(res.json.error).toBe("invalid_request");
    }
  });
});
