import type { Socket } from "node:net";
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
  /** The client's socket, with counts of its writes as Node hands them to the system: one `_write` each, or one `_writev` for all it held. */
  function writesOf(redis: ReturnType<typeof createRedis>) {
    const socket = (redis as unknown as { stream: Socket }).stream;
    const internals = socket as unknown as { _write: (...args: unknown[]) => void; _writev: (chunks: unknown[], done: () => void) => void };
    return { socket, single: vi.spyOn(internals, "_write"), gathered: vi.spyOn(internals, "_writev") };
  }

  it.runIf(process.env.TEST_REDIS_URL)("writes the commands of one turn to the socket in one system call, on every connection", async () => {
    const redis = createRedis(process.env.TEST_REDIS_URL!);
    try {
      await firstConnection(redis, 60_000);
      const key = `idp-test:gathered:${Date.now()}`;
      for (let connection = 1; connection <= 2; connection++) {
        const { socket, single, gathered } = writesOf(redis);
        const answers = Promise.all([redis.set(key, String(connection), "EX", 10), ...Array.from({ length: 9 }, () => redis.get(key))]);
        // Held until the end of this turn.
        expect(socket.writableCorked).toBe(1);
        expect(single).not.toHaveBeenCalled();
        expect(gathered).not.toHaveBeenCalled();
        expect(await answers).toEqual(["OK", ...Array(9).fill(String(connection))]);
        expect(single).not.toHaveBeenCalled();
        expect(gathered).toHaveBeenCalledTimes(1);
        expect(gathered.mock.calls[0]![0].length).toBe(10);
        // The next turn starts gathering afresh.
        expect(socket.writableCorked).toBe(0);
        // A new connection (a new socket) gathers too.
        if (connection === 1) {
          redis.disconnect(true);
          await new Promise<void>((ready) => redis.once("ready", () => ready()));
          expect(writesOf(redis).socket).not.toBe(socket);
        }
      }
      await redis.del(key);
    } finally {
      redis.disconnect();
    }
  });

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
