import { PrivateKey } from "@bsv/sdk";
import { getAuthToken } from "bitcoin-auth";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminCommands, type AdminServices } from "../../scripts/admin-commands.js";
import { agentKit, ed25519 } from "../helpers/agents.js";
import { peerClient } from "../helpers/mutual-auth.js";
import { authorize, pkce, REDIRECT, registerClient, signUp, token } from "../helpers/oauth.js";
import { startTestServer, uniqueClientIp, type TestServer } from "../helpers/server.js";

/**
 * Two instances of one deployment, as behind a load balancer: two servers on their own ports,
 * each with its own database pool, caches and Redis connection, against one database and one
 * Redis, with one public URL (AUTH_URL, the issuer). `a` answers at AUTH_URL's address; `b`
 * is reached straight at its own port (`b.local`). What one instance did, the other knows:
 * sessions, refresh-token rotation and reuse, single-use Bitcoin-Auth tokens, signing keys,
 * device codes, agent approvals, rate-limit counters.
 */
const DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const redisUrl = process.env.TEST_REDIS_URL;
describe.runIf(Boolean(redisUrl))("several instances sharing Redis", () => {
  let a: TestServer;
  let b: TestServer;
  /** Instance b, as the test helpers take a server: its own address, the deployment's AUTH_URL as Origin. */
  let viaB: TestServer;
  beforeAll(async () => {
    // One deployment: one server identity (BRC-103), else each instance would make its own in DATA_DIR.
    const deployment = { REDIS_URL: redisUrl!, DEVICE_POLL_INTERVAL: "1", SERVER_IDENTITY_KEY: PrivateKey.fromRandom().toHex() };
    a = await startTestServer(deployment);
    const database = a.config.database;
    b = await startTestServer({ ...deployment, AUTH_URL: a.url, PORT: "0", DATABASE_URL: database.kind === "sqlite" ? database.file : database.url });
    viaB = { ...b, url: b.local.url, api: b.local.api };
    expect(b.local.url).not.toBe(a.url);
    expect(b.db).not.toBe(a.db);
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it("a session made on one instance is valid on the other, and signing out ends it on both", async () => {
    const person = await signUp(a);
    const onB = await viaB.api("/api/auth/get-session", { cookie: person.cookie });
    expect(onB.json?.user?.id).toBe(person.user.id);
    const out = await viaB.api("/api/auth/sign-out", { cookie: person.cookie, body: {} });
    expect(out.status).toBe(200);
    expect((await a.api("/api/auth/get-session", { cookie: person.cookie })).json).toBeNull();
  });

  it("a Bitcoin-Auth token used on one instance is refused on the other", async () => {
    const key = PrivateKey.fromRandom();
    const person = await signUp(a);
    const client = await registerClient(a, { member_pubkey: key.toPublicKey().toString() });
    const { verifier, challenge } = pkce();
    const { code } = await authorize(a, { clientId: client.client_id, cookie: person.cookie, challenge });
    const body = new URLSearchParams({ grant_type: "authorization_code", code: code!, redirect_uri: REDIRECT, client_id: client.client_id, code_verifier: verifier }).toString();
    const authToken = getAuthToken({ privateKeyWif: key.toWif(), requestPath: "/api/auth/oauth2/token", body });
    const post = (server: TestServer) =>
      fetch(`${server.url}/api/auth/oauth2/token`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", "x-auth-token": authToken }, body });
    expect((await post(a)).status).toBe(200);
    const replay = await post(viaB);
    expect(replay.status).toBe(401);
    expect((await replay.json()).error).toBe("invalid_client");
  });

  /** A person, a public client and its first tokens (openid offline_access), all made on `a`. */
  async function grant(scope = "openid profile offline_access", extra: Record<string, string> = {}) {
    const person = await signUp(a);
    const client = await registerClient(a);
    const { verifier, challenge } = pkce();
    const { code } = await authorize(a, { clientId: client.client_id, cookie: person.cookie, challenge, scope, extra });
    const tokens = await token(a, { grant_type: "authorization_code", code: code!, redirect_uri: REDIRECT, client_id: client.client_id, code_verifier: verifier, ...extra });
    expect(tokens.status, tokens.text).toBe(200);
    return { person, client, tokens: tokens.json as { access_token: string; refresh_token: string; id_token?: string } };
  }
  const refresh = (server: TestServer, clientId: string, refreshToken: string) => token(server, { grant_type: "refresh_token", refresh_token: refreshToken, client_id: clientId });

  it("a refresh token rotated on one instance is reuse on the other, and the reuse revokes the family on both", async () => {
    const { client, tokens } = await grant();
    const rotated = await refresh(a, client.client_id, tokens.refresh_token);
    expect(rotated.status, rotated.text).toBe(200);
    const next = rotated.json.refresh_token as string;
    expect(next).not.toBe(tokens.refresh_token);
    const userinfo = (server: TestServer) => server.api("/api/auth/oauth2/userinfo", { headers: { authorization: `Bearer ${rotated.json.access_token}` } });
    expect((await userinfo(viaB)).status).toBe(200);

    const reuse = await refresh(viaB, client.client_id, tokens.refresh_token);
    expect(reuse.status).toBe(400);
    expect(reuse.json.error).toBe("invalid_grant");
    // The whole family is gone: the newest token is refused on either instance.
    for (const server of [a, viaB]) {
      const res = await refresh(server, client.client_id, next);
      expect(res.status, res.text).toBe(400);
      expect(res.json.error).toBe("invalid_grant");
    }
    // ...and so are the access tokens it issued.
    for (const server of [a, viaB]) expect((await userinfo(server)).status).toBe(401);
  });

  it("one refresh token presented to both instances at once is rotated once", async () => {
    const { client, tokens } = await grant();
    const answers = await Promise.all([refresh(a, client.client_id, tokens.refresh_token), refresh(viaB, client.client_id, tokens.refresh_token)]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 400]);
    expect(answers.find((r) => r.status === 400)!.json.error).toBe("invalid_grant");
  });

  it("a signing key made on one instance is published and trusted by the other within about a second", async () => {
    const jwksOf = async (server: TestServer) => (await server.api("/api/auth/jwks")).json as { keys: { kid: string }[] };
    // Both instances hold their key sets in memory now (lib/jwks-cache.ts keeps them 30 s).
    const before = await jwksOf(viaB);
    expect((await jwksOf(a)).keys.map((k) => k.kid).sort()).toEqual(before.keys.map((k) => k.kid).sort());

    const services = { auth: a.auth, db: a.db, logger: { info() {}, warn() {}, error() {}, debug() {} } } as unknown as AdminServices;
    const rotated = (await adminCommands["keys rotate"]!(services, [], { all: false })).json as { kid: string };
    const started = Date.now();
    let published = await jwksOf(viaB);
    while (!published.keys.some((k) => k.kid === rotated.kid) && Date.now() - started < 10_000) {
      await sleep(100);
      published = await jwksOf(viaB);
    }
    expect(published.keys.map((k) => k.kid)).toEqual(expect.arrayContaining([...before.keys.map((k) => k.kid), rotated.kid]));
    // Well inside the 30 s the cache would otherwise wait.
    expect(Date.now() - started).toBeLessThan(5_000);

    // a signs with the new key at once; the token verifies against b's key set, and b's own
    // checks of a JWT access token (our /mcp, bound by RFC 8707 `resource`) accept it.
    const resource = `${a.url}/mcp`;
    const { tokens } = await grant("openid profile", { resource });
    expect(decodeProtectedHeader(tokens.id_token!).kid).toBe(rotated.kid);
    expect(decodeProtectedHeader(tokens.access_token).kid).toBe(rotated.kid);
    const keys = createLocalJWKSet(await jwksOf(viaB));
    await expect(jwtVerify(tokens.id_token!, keys, { issuer: a.url })).resolves.toBeTruthy();
    await expect(jwtVerify(tokens.access_token, keys, { audience: resource })).resolves.toBeTruthy();
    const ping = await viaB.api("/mcp", { body: { jsonrpc: "2.0", id: 1, method: "ping" }, headers: { accept: "application/json, text/event-stream", authorization: `Bearer ${tokens.access_token}` } });
    expect(ping.status, ping.text).toBe(200);
  });

  it("a device code asked for on one instance, approved through the other's /device page, is redeemed on the first", async () => {
    const person = await signUp(a);
    const client = await registerClient(a, { client_name: "Living Room TV", redirect_uris: undefined, application_type: undefined, grant_types: [DEVICE_GRANT], response_types: [], token_endpoint_auth_method: "none" });
    const asked = await fetch(`${a.url}/api/auth/device/code`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ client_id: client.client_id, scope: "openid profile" }) });
    expect(asked.status).toBe(200);
    const code = (await asked.json()) as { device_code: string; user_code: string };
    const poll = (server: TestServer) => token(server, { grant_type: DEVICE_GRANT, device_code: code.device_code, client_id: client.client_id });

    expect((await poll(a)).json.error).toBe("authorization_pending");
    // The poll interval is kept with the code, not per instance: polling b at once is too fast.
    expect((await poll(viaB)).json.error).toBe("slow_down");

    const page = await viaB.api(`/device?user_code=${code.user_code}`, { cookie: person.cookie });
    expect(page.status).toBe(200);
    expect(page.text).toContain("Living Room TV");
    const approved = await viaB.api("/device", {
      cookie: person.cookie,
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ user_code: code.user_code, decision: "approve" }).toString(),
    });
    expect(approved.status).toBe(200);
    expect(approved.text).toContain("Device connected");

    await sleep(6_100); // past the interval, and the 5 s slow_down adds (RFC 8628 §3.5)
    const redeemed = await poll(a);
    expect(redeemed.status, redeemed.text).toBe(200);
    expect(typeof redeemed.json.access_token).toBe("string");
    const userinfo = await viaB.api("/api/auth/oauth2/userinfo", { headers: { authorization: `Bearer ${redeemed.json.access_token}` } });
    expect(userinfo.json?.sub).toBe(person.user.id);
    // Single use, on either instance.
    expect((await poll(viaB)).json.error).toBe("invalid_grant");
  }, 30_000);

  it("an agent registered through one instance and approved through the other acts on both", async () => {
    const onA = agentKit(() => a);
    const person = await signUp(a);
    const host = await onA.enrolledHost(person.cookie);
    const key = await ed25519();
    const registered = await onA.bearer("/api/auth/agent/register", await onA.hostJwt(host.hostId, host.hostKey, { agent_public_key: key.jwk }), { name: "Helper", capabilities: ["profile.read"], reason: "tests" });
    expect(registered.status, registered.text).toBe(200);
    const agent = { id: registered.json.agent_id as string, hostId: host.hostId, key };
    const execute = async (server: TestServer) => server.api("/api/auth/capability/execute", { headers: { authorization: `Bearer ${await onA.agentJwt(agent)}` }, body: { capability: "profile.read" } });
    // Pending: refused on either instance.
    for (const server of [a, viaB]) expect((await execute(server)).status).toBe(403);

    const approved = await viaB.api("/api/auth/agent/approve-capability", { cookie: person.cookie, body: { agent_id: agent.id, user_code: registered.json.approval.user_code, action: "approve" } });
    expect(approved.status, approved.text).toBe(200);
    for (const server of [a, viaB]) expect((await execute(server)).status).toBe(200);

    // An agent JWT spent on one instance is a replay on the other.
    const jwt = await onA.agentJwt(agent);
    const call = (server: TestServer) => server.api("/api/auth/capability/execute", { headers: { authorization: `Bearer ${jwt}` }, body: { capability: "profile.read" } });
    expect((await call(viaB)).status).toBe(200);
    const replay = await call(a);
    expect(replay.status).toBe(401);
    expect(replay.json.error).toBe("jti_replay");

    // Revoked through a: refused by b.
    expect((await a.api("/api/auth/agent/revoke", { cookie: person.cookie, body: { agent_id: agent.id } })).status).toBe(200);
    expect((await execute(viaB)).status).toBe(403);
  });

  it("a BRC-103 peer that shook hands with one instance is served by the other, and a signed request is accepted once across both", async () => {
    // A load balancer that sends the handshake to a and everything else to b, keeping what it forwarded.
    const forwarded: Array<{ path: string; headers: Record<string, string> }> = [];
    const balancer = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string" && !["host", "connection", "content-length"].includes(k)) headers[k] = v;
      forwarded.push({ path: req.url!, headers });
      const target = req.url!.startsWith("/.well-known/auth") ? a.url : b.local.url;
      const answer = await fetch(target + req.url, { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
      res.writeHead(answer.status, Object.fromEntries([...answer.headers].filter(([k]) => !["content-length", "content-encoding", "transfer-encoding"].includes(k))));
      res.end(Buffer.from(await answer.arrayBuffer()));
    });
    await new Promise<void>((resolve) => balancer.listen(0, "127.0.0.1", resolve));
    try {
      const peer = peerClient();
      const res = await peer.client.fetch(`http://127.0.0.1:${(balancer.address() as AddressInfo).port}/api/certificates/issued`, { method: "GET" });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ subject: peer.identityKey, certificates: [] });
      expect(forwarded.map((f) => f.path)).toEqual(["/.well-known/auth", "/api/certificates/issued"]);
      // The same signed request again, at a: already used.
      const replay = await fetch(`${a.url}/api/certificates/issued`, { headers: forwarded[1]!.headers });
      expect(replay.status).toBe(401);
      expect((await replay.json()).detail).toMatch(/already used/);
    } finally {
      await new Promise<void>((resolve) => balancer.close(() => resolve()));
    }
  });

  it("shares rate-limit counters between instances", async () => {
    const limits = { RATE_LIMIT_ENABLED: "true", REGISTER_RATE_LIMIT: "2", TRUST_PROXY: "true" };
    const database = a.config.database;
    const dbUrl = database.kind === "sqlite" ? database.file : database.url;
    const c = await startTestServer({ REDIS_URL: redisUrl!, DATABASE_URL: dbUrl, ...limits });
    const d = await startTestServer({ REDIS_URL: redisUrl!, DATABASE_URL: dbUrl, ...limits });
    try {
      // Distinct client address for this test only, so other runs' counters cannot interfere.
      const ip = uniqueClientIp();
      const reg = (server: TestServer) =>
        server.api("/api/auth/oauth2/register", { body: { client_name: "rl", redirect_uris: ["https://a.example/cb"] }, headers: { "x-forwarded-for": ip } });
      const statuses = [(await reg(c)).status, (await reg(d)).status, (await reg(c)).status, (await reg(d)).status];
      expect(statuses.slice(0, 2)).toEqual([201, 201]);
      expect(statuses.slice(2)).toEqual([429, 429]);
    } finally {
      await c.close();
      await d.close();
    }
  });
});
