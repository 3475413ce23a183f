import { Redis } from "ioredis";
import type { SecondaryStorage } from "@better-auth/core/db";
import { ServiceUnavailable } from "./errors.js";

/**
 * One Redis connection, shared by better-auth's secondary storage and our replay caches.
 *
 * Built to fail fast while Redis is away and to come back by itself: a lost connection is
 * retried every 100-500 ms for ever; a command issued meanwhile fails at once (no offline queue
 * while down), one in flight after at most two attempts (maxRetriesPerRequest) or 2 s
 * (commandTimeout), and its caller answers 503 or falls back (docs/operations.md, "When Redis
 * is down"). `onDown` / `onUp` are told once
 * per outage (the server logs them); without an 'error' listener ioredis would print every
 * failed attempt.
 */
export function createRedis(url: string, events: { onDown?: (err: Error) => void; onUp?: () => void } = {}): Redis {
  const redis = new Redis(url, {
    maxRetriesPerRequest: 1,
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
  redis.on("ready", () => {
    everReady = true;
    redis.options.enableOfflineQueue = true;
    if (!down) return;
    down = false;
    events.onUp?.();
  });
  return redis;
}

const PREFIX = "idp:";

/** A Redis command whose failure fails the request (503): the caller cannot do without its answer. */
async function required<T>(command: () => Promise<T>): Promise<T> {
  try {
    return await command();
  } catch (err) {
    throw new ServiceUnavailable("redis", err);
  }
}

/**
 * better-auth secondary storage on Redis: sessions' cache, verification values and the
 * rate-limit counters, shared by every instance of the deployment.
 *
 * While Redis does not answer, reads and writes of sessions and verification values fail the
 * request with a 503 (fail closed: a session revoked elsewhere must not be taken for live), and
 * the rate-limit counters (`increment`, used by better-auth's limiter only) count in this process
 * instead (fail open: a limit still applies, per instance, and the route stays up).
 */
export function redisSecondaryStorage(redis: Redis): SecondaryStorage {
  const local = processCounters();
  return {
    get: (key) => required(() => redis.get(PREFIX + key)),
    getAndDelete: (key) => required(() => redis.getdel(PREFIX + key)),
    async increment(key, ttl) {
      try {
        // INCR then set the TTL only on creation: the window is fixed from the first hit.
        const [[, count]] = (await redis.multi().incr(PREFIX + key).exec()) as [[unknown, number]];
        if (count === 1) await redis.expire(PREFIX + key, Math.max(1, Math.ceil(ttl)));
        return count;
      } catch {
        return local.increment(key, ttl);
      }
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

/** Fixed-window counters in this process, bounded in memory: the fallback while Redis is away. */
function processCounters(maxKeys = 100_000) {
  const windows = new Map<string, { end: number; count: number }>();
  return {
    increment(key: string, ttlSeconds: number): number {
      const now = Date.now();
      let entry = windows.get(key);
      if (!entry || entry.end <= now) {
        if (windows.size >= maxKeys) for (const [k, w] of windows) if (w.end <= now) windows.delete(k);
        if (windows.size >= maxKeys) windows.delete(windows.keys().next().value as string);
        entry = { end: now + Math.max(1, Math.ceil(ttlSeconds)) * 1000, count: 0 };
        windows.set(key, entry);
      }
      entry.count += 1;
      return entry.count;
    },
  };
}
