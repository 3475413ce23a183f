import type { Socket } from "node:net";
import { Redis } from "ioredis";
import type { SecondaryStorage } from "@better-auth/core/db";
import { ServiceUnavailable } from "./errors.js";

/**
 * One Redis connection, shared by better-auth's secondary storage and our replay caches.
 *
 * Built to fail fast while Redis is away and to come back by itself: a lost connection is
 * retried every 100-500 ms for ever; a command issued meanwhile fails at once (no offline queue
 * while down), one in flight after at most two attempts (maxRetriesPerRequest) or 2 s
 * (commandTimeout), and its caller answers 503 or falls back (docs/operations.md, "When the
 * database or Redis is down"). `onDown` / `onUp` are told once
 * per outage (the server logs them); without an 'error' listener ioredis would print every
 * failed attempt.
 */
export function createRedis(url: string, events: { onDown?: (err: Error) => void; onUp?: () => void } = {}): Redis {
  const redis = new Redis(url, {
    maxRetriesPerRequest: 1,
    // Each command is written when issued; commands issued together are still all in flight at
    // once (Redis answers in order), so a request waits one round trip for them. No
    // auto-pipelining: it gathers a tick's commands into an ioredis Pipeline, and each Pipeline
    // defines its own `length` getter, so each has its own hidden class, which V8 keeps (with
    // the getter's closure, the Pipeline, its commands and their callers' requests) through
    // every young-generation collection until a full one. In the soak that was about 1 MB
    // copied and promoted per scavenge, and scavenge pauses of 8-15 ms.
    enableAutoPipelining: false,
    enableOfflineQueue: true,
    lazyConnect: false,
    connectTimeout: 2000,
    commandTimeout: 2000,
    retryStrategy: (attempt) => Math.min(attempt * 100, 500),
  });
  let down = false;
  const lost = (err: Error) => {
    // Once a connection was lost, commands fail at once until it is back instead of queueing
    // (ioredis reads this option per command); before the first connection they wait for it.
    redis.options.enableOfflineQueue = false;
    if (down) return;
    down = true;
    events.onDown?.(err);
  };
  redis.on("error", lost);
  redis.on("close", () => {
    if (redis.options.enableOfflineQueue && !down && everReady) lost(new Error("connection closed"));
  });
  let everReady = false;
  // Each connection's socket (a new one after every reconnection) gathers its writes per turn.
  redis.on("connect", () => gatherWrites((redis as unknown as { stream?: Socket }).stream));
  redis.on("ready", () => {
    everReady = true;
    redis.options.enableOfflineQueue = true;
    if (!down) return;
    down = false;
    events.onUp?.();
  });
  return redis;
}

/** Sockets already gathering (a socket is wrapped once). */
const gathering = new WeakSet<Socket>();

/**
 * The commands written to `socket` in one turn of the event loop leave in one system call: the
 * socket is corked at the first write of a turn and uncorked at the end of it (`setImmediate`),
 * when Node writes what it holds with one `writev`. ioredis writes each command on its own
 * (auto-pipelining is off, above), and each write was a system call: under load about a fifth
 * of the event loop's time in get-session on Redis, more than the commands' own work. A command
 * waits at most for the end of the turn it was issued in (as auto-pipelining's did), and no
 * Pipeline object is made. Wraps the socket's own `write` (ioredis writes through it); a socket
 * it cannot wrap is left as it is.
 */
export function gatherWrites(socket: Socket | undefined): void {
  if (!socket || typeof socket.cork !== "function" || gathering.has(socket)) return;
  gathering.add(socket);
  let corked = false;
  const uncork = () => {
    corked = false;
    socket.uncork();
  };
  const write = socket.write;
  socket.write = function (this: Socket, ...args: Parameters<Socket["write"]>) {
    if (!corked) {
      corked = true;
      socket.cork();
      setImmediate(uncork);
    }
    return write.apply(this, args);
  } as Socket["write"];
}

/**
 * Resolves once `redis` has its first connection, once it failed to connect, or after `ms`,
 * whichever comes first. The server waits for it before it listens, so that its first requests
 * are counted in Redis rather than in the limiters' per-process insurance (which answers only
 * while Redis is not ready); a Redis that is down delays nothing beyond its refusal.
 */
export function firstConnection(redis: Redis, ms = 2000): Promise<void> {
  if (redis.status === "ready") return Promise.resolve();
  return new Promise((done) => {
    const finish = () => {
      clearTimeout(timer);
      redis.off("ready", finish);
      redis.off("error", finish);
      done();
    };
    const timer = setTimeout(finish, ms);
    redis.once("ready", finish);
    redis.once("error", finish);
  });
}

const PREFIX = "idp:";

/** The Redis key of `key` in better-auth's secondary storage (redisSecondaryStorage below). */
export const secondaryStorageKey = (key: string): string => PREFIX + key;

/** A Redis command whose failure fails the request (503): the caller cannot do without its answer. */
async function required<T>(command: () => Promise<T>): Promise<T> {
  try {
    return await command();
  } catch (err) {
    throw new ServiceUnavailable("redis", err);
  }
}

/**
 * better-auth secondary storage on Redis: sessions' cache and verification values, shared by
 * every instance of the deployment (rate-limit counters are lib/rate-limit.ts's, not here).
 *
 * While Redis does not answer, reads and writes fail the request with a 503 (fail closed: a
 * session revoked elsewhere must not be taken for live).
 */
export function redisSecondaryStorage(redis: Redis): SecondaryStorage {
  return {
    get: (key) => required(() => redis.get(PREFIX + key)),
    getAndDelete: (key) => required(() => redis.getdel(PREFIX + key)),
    // Required by the interface; unused while better-auth's limiter is off (lib/limits.ts counts).
    async increment(key, ttl) {
      // INCR then set the TTL only on creation: the window is fixed from the first hit.
      const [[, count]] = (await required(() => redis.multi().incr(PREFIX + key).exec())) as [[unknown, number]];
      if (count === 1) await required(() => redis.expire(PREFIX + key, Math.max(1, Math.ceil(ttl))));
      return count;
    },
    async set(key, value, ttl) {
      if (ttl && ttl > 0) await required(() => redis.set(PREFIX + key, value, "EX", Math.ceil(ttl)));
      else await required(() => redis.set(PREFIX + key, value));
    },
    async delete(key) {
      await required(() => redis.del(PREFIX + key));
    },
  };
}

