import { describe, expect, it, vi } from "vitest";
import { createRedis, firstConnection } from "../../lib/redis.js";
import { freePort } from "../helpers/server.js";

/**
 * The server waits for Redis's first connection before it listens (server.ts), so that the
 * limits count in Redis from the first request; a Redis that refuses delays nothing.
 */
describe("firstConnection (lib/redis.ts)", () => {
  it.runIf(process.env.TEST_REDIS_URL)("resolves once the client is ready", async () => {
    const redis = createRedis(process.env.TEST_REDIS_URL!);
    try {
      expect(redis.status).not.toBe("ready");
      await firstConnection(redis, 60_000);
      expect(redis.status).toBe("ready");
    } finally {
      redis.disconnect();
    }
  });

  it("resolves when Redis refuses the connection, long before its own time limit", { timeout: 10_000 }, async () => {
    const redis = createRedis(`redis://127.0.0.1:${await freePort()}`);
    try {
      // A limit of a minute: only the refusal can end the wait within the test's 10 s.
      await firstConnection(redis, 60_000);
      expect(redis.status).not.toBe("ready");
    } finally {
      redis.disconnect();
    }
  });
});

/**
 * ioredis's auto-pipelining gathers a tick's commands into a Pipeline, and each Pipeline has a
 * hidden class of its own (its constructor defines a `length` getter on the instance): V8 kept
 * every one, with the commands and the requests waiting on them, through young-generation
 * collections until a full one (lib/redis.ts). Commands go out as issued instead.
 */
describe("createRedis (lib/redis.ts)", () => {
  it.runIf(process.env.TEST_REDIS_URL)("sends each command as issued, through no Pipeline", async () => {
    const redis = createRedis(process.env.TEST_REDIS_URL!);
    try {
      await firstConnection(redis, 60_000);
      const pipeline = vi.spyOn(redis, "pipeline");
      const multi = vi.spyOn(redis, "multi");
      const key = `idp-test:no-pipeline:${Date.now()}`;
      await Promise.all([redis.set(key, "1", "EX", 10), redis.get(key), redis.del(key)]);
      expect(pipeline).not.toHaveBeenCalled();
      expect(multi).not.toHaveBeenCalled();
    } finally {
      redis.disconnect();
    }
  });
});
