import { Redis } from "ioredis";
import type { SecondaryStorage } from "@better-auth/core/db";

/** One Redis connection, shared by better-auth's secondary storage and our replay caches. */
export function createRedis(url: string): Redis {
  return new Redis(url, { maxRetriesPerRequest: 2, enableOfflineQueue: true, lazyConnect: false });
}

const PREFIX = "idp:";

/**
 * better-auth secondary storage on Redis: sessions' cache and verification values, shared by
 * every instance of the deployment (rate-limit counters are lib/rate-limit.ts's, not here).
 */
export function redisSecondaryStorage(redis: Redis): SecondaryStorage {
  return {
    get: (key) => redis.get(PREFIX + key),
    getAndDelete: (key) => redis.getdel(PREFIX + key),
    async increment(key, ttl) {
      // INCR then set the TTL only on creation: the window is fixed from the first hit.
      const [[, count]] = (await redis.multi().incr(PREFIX + key).exec()) as [[unknown, number]];
      if (count === 1) await redis.expire(PREFIX + key, Math.max(1, Math.ceil(ttl)));
      return count;
    },
    async set(key, value, ttl) {
      if (ttl && ttl > 0) await redis.set(PREFIX + key, value, "EX", Math.ceil(ttl));
      else await redis.set(PREFIX + key, value);
    },
    async delete(key) {
      await redis.del(PREFIX + key);
    },
  };
}
