import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentKit, ed25519, type Host } from "../helpers/agents.js";
import { useTestServer } from "../helpers/fixtures.js";
import { signUp } from "../helpers/oauth.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

/**
 * Agent Auth Protocol §4.6/§8.4: a host JWT carries a `jti` and is accepted once. The same
 * token again is refused (401 jti_replay), a token without `jti` is refused (401 invalid_jwt),
 * and with Redis a token spent on one instance is refused by another.
 */

const server = useTestServer();
const kit = agentKit(() => server);
let host: Host;
let agentId: string;

beforeAll(async () => {
  const person = await signUp(server);
  host = await kit.enrolledHost(person.cookie);
  agentId = (await kit.approvedAgent(person.cookie, host, ["profile.read"])).id;
});

const status = (jwt: string, base = server.url) => fetch(`${base}/api/auth/agent/status?agent_id=${agentId}`, { headers: { authorization: `Bearer ${jwt}` } });

describe("host JWTs", () => {
  it("are accepted once: the same token again is refused", async () => {
    const jwt = await kit.hostJwt(host.hostId, host.hostKey);
    const first = await status(jwt);
    expect(first.status).toBe(200);
    expect(await first.json()).toMatchObject({ agent_id: agentId, status: "active" });
    const again = await status(jwt);
    expect(again.status).toBe(401);
    expect(await again.json()).toEqual({ error: "jti_replay", message: expect.any(String) });
    expect(again.headers.get("www-authenticate")).toMatch(/^AgentAuth discovery=/);
    // A fresh token from the same host is fine.
    expect((await status(await kit.hostJwt(host.hostId, host.hostKey))).status).toBe(200);
  });

  it("are refused without a jti", async () => {
    const res = await status(await kit.hostJwt(host.hostId, host.hostKey, {}, { jti: null }));
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: "invalid_jwt" });
  });

  it("are single use on every route that takes them, POST included", async () => {
    const jwt = await kit.hostJwt(host.hostId, host.hostKey);
    expect((await kit.bearer("/api/auth/agent/device/code", jwt, { agent_id: agentId })).status).toBe(400); // the agent is already active
    const replayed = await kit.bearer("/api/auth/agent/device/code", jwt, { agent_id: agentId });
    expect(replayed.status).toBe(401);
    expect(replayed.json).toMatchObject({ error: "jti_replay" });
  });

  it("replayed on the public capability list, count as no credential (agent-auth's rule there)", async () => {
    const jwt = await kit.hostJwt(host.hostId, host.hostKey);
    expect((await kit.bearer("/api/auth/capability/list", jwt)).status).toBe(200);
    const again = await kit.bearer("/api/auth/capability/list", jwt);
    expect(again.status).toBe(200);
    expect(again.headers.get("cache-control") ?? "").not.toMatch(/private/);
  });

  it("are never recorded before the signature is checked: a forged token leaves the real one usable", async () => {
    const jti = randomUUID();
    const forged = await kit.hostJwt(host.hostId, await ed25519(), {}, { jti });
    expect((await status(forged)).status).toBe(401);
    expect((await status(await kit.hostJwt(host.hostId, host.hostKey, {}, { jti }))).status).toBe(200);
  });
});

const redisUrl = process.env.TEST_REDIS_URL;
describe.runIf(Boolean(redisUrl))("host JWTs with several instances sharing Redis", () => {
  let other: TestServer;
  beforeAll(async () => {
    // A second instance of the same deployment: same public URL (the JWT's audience), database and Redis.
    const database = server.config.database;
    other = await startTestServer({ REDIS_URL: redisUrl!, AUTH_URL: server.url, PORT: "0", DATABASE_URL: database.kind === "sqlite" ? database.file : database.url });
  });
  afterAll(async () => {
    await other?.close();
  });

  it("a host JWT used on one instance is refused on the other", async () => {
    const jwt = await kit.hostJwt(host.hostId, host.hostKey);
    expect((await status(jwt)).status).toBe(200);
    const replay = await status(jwt, `http://127.0.0.1:${other.port}`);
    expect(replay.status).toBe(401);
    expect(await replay.json()).toMatchObject({ error: "jti_replay" });
  });
});
