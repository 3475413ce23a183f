import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newIdentity, registerIdentity, signRequest } from "../helpers/bap.js";
import { useTestServer } from "../helpers/fixtures.js";
import { signUp } from "../helpers/oauth.js";
import { missingBinaries, startThrowawayRedis, type ThrowawayRedis } from "../helpers/throwaway.js";

/**
 * Redis down (docs/operations.md, "When the database or Redis is down"): a throwaway redis-server of the test's
 * own (never the machine's shared one) is stopped under a running server and started again.
 * Replay records fail closed (503, the signed request is not accepted); rate-limit counters fail
 * open (counted in the process: still limited, still served); it recovers by itself.
 */
if (missingBinaries) console.warn(`tests/ops/faults-redis.test.ts: Redis fault tests skipped: ${missingBinaries}`);

describe.skipIf(Boolean(missingBinaries))("Redis down", () => {
  let redis: ThrowawayRedis;
  beforeAll(async () => {
    redis = await startThrowawayRedis();
  });
  afterAll(async () => {
    await redis?.destroy();
  });
  const server = useTestServer(() => ({ REDIS_URL: redis.url, RATE_LIMIT_ENABLED: "true", TRUST_PROXY_HOPS: "1" }));

  const SYNC = "/api/backup/sync";
  const SIGN_IN = "/api/auth/sign-in/sigma";
  let n = 0;
  /** Each request from an address of its own, so only the counters a step means to fill are filled. */
  const from = (ip = `198.19.0.${++n}`) => ({ "x-forwarded-for": ip });

  async function sync(id: ReturnType<typeof newIdentity>) {
    const body = JSON.stringify({ bapId: id.bapId, encryptedBackup: Buffer.from(`backup ${Date.now()} ${Math.random()}`).toString("base64") });
    return server.api(SYNC, { body, headers: { authorization: `Bitcoin-Auth ${signRequest(id.key, SYNC, body)}`, ...from() } });
  }
  async function keySignIn(id: ReturnType<typeof newIdentity>) {
    const body = JSON.stringify({ bapId: id.bapId });
    return server.api(SIGN_IN, { body, headers: { "x-auth-token": signRequest(id.key, SIGN_IN, body), ...from() } });
  }

  it("fails closed for replay records (503), open for rate-limit counters (per process), and recovers when Redis is back", async () => {
    const person = await signUp(server);
    const id = newIdentity();
    expect((await registerIdentity(server, person.cookie, id, {})).status).toBe(201);
    expect((await sync(id)).status).toBe(200);
    expect((await keySignIn(id)).status).toBe(200);

    await redis.stop();
    try {
      // A Bitcoin-Auth token cannot be recorded as used: it is refused, not accepted (503).
      const started = Date.now();
      const refused = await sync(id);
      expect(refused.status).toBe(503);
      expect(refused.headers.get("content-type")).toContain("application/problem+json");
      expect(refused.json).toMatchObject({ status: 503, code: "TEMPORARILY_UNAVAILABLE" });
      expect(refused.headers.get("retry-after")).toBe("1");
      expect(Date.now() - started).toBeLessThan(3000);
      // The same in better-auth's family: key sign-in.
      const signIn = await keySignIn(id);
      expect(signIn.status).toBe(503);
      expect(signIn.json).toMatchObject({ code: "TEMPORARILY_UNAVAILABLE" });
      // Sessions are cached in Redis, revocations with them: a session is not taken on trust either.
      expect((await server.api("/api/auth/get-session", { cookie: person.cookie })).status).toBe(503);

      // Counters fall back to this process: the route is served, and still limited (20 a minute).
      const ip = "198.19.1.1";
      const statuses: number[] = [];
      for (let i = 0; i < 21; i++) {
        const res = await server.api("/api/auth/sign-in/email", { body: { email: "nobody@example.com", password: "wrong password" }, headers: from(ip) });
        statuses.push(res.status);
      }
      expect(statuses.slice(0, 20).every((s) => s === 401)).toBe(true);
      expect(statuses[20]).toBe(429);
      const ready = await server.api("/readyz");
      expect(ready.status).toBe(503);
      expect(ready.json.checks.redis).toMatch(/failing/);
    } finally {
      await redis.start();
    }

    // Back by itself within a second or so: signed requests are accepted again.
    for (let i = 0; i < 50 && (await server.api("/readyz")).status !== 200; i++) await new Promise((r) => setTimeout(r, 100));
    expect((await server.api("/readyz")).status).toBe(200);
    expect((await sync(id)).status).toBe(200);
    expect((await keySignIn(id)).status).toBe(200);
    expect((await server.api("/api/auth/get-session", { cookie: person.cookie })).status).toBe(200);
  });
});
