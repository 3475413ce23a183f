import type { Redis } from "ioredis";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import { LIMIT_NAMES, LIMITS, type LimitName, type LimitSettings } from "./limits.js";

export interface LimitResult {
  allowed: boolean;
  /** Seconds until the key has budget again (the Retry-After value, RFC 6585 §4). */
  retryAfter: number;
}

/** One limit's counters (a row of lib/limits.ts). */
export interface Limiter {
  /** Counts one request for `key`; not allowed past the budget. */
  hit(key: string): Promise<LimitResult>;
  /** Whether `key` has budget left, without counting anything. */
  check(key: string): Promise<LimitResult>;
}

/** A counter per limit of lib/limits.ts. */
export type Limiters = Readonly<Record<LimitName, Limiter>>;

const retryAfterOf = (res: RateLimiterRes) => Math.max(1, Math.ceil(res.msBeforeNext / 1000));

/** rate-limiter-flexible's counter behind our small interface. */
function limiterOver(counter: RateLimiterAbstract, points: number): Limiter {
  return {
    async hit(key) {
      try {
        await counter.consume(key);
        return { allowed: true, retryAfter: 0 };
      } catch (refused) {
        // A RateLimiterRes is "over budget"; anything else is a store failure the insurance
        // limiter did not absorb: counters fail open (availability), never a 500.
        if (refused instanceof RateLimiterRes) return { allowed: false, retryAfter: retryAfterOf(refused) };
        return { allowed: true, retryAfter: 0 };
      }
    },
    async check(key) {
      const res = await counter.get(key).catch(() => null);
      if (!res || res.consumedPoints < points) return { allowed: true, retryAfter: 0 };
      return { allowed: false, retryAfter: retryAfterOf(res) };
    },
  };
}

/**
 * The counters of every limit: in Redis when the deployment has it (shared by every instance),
 * each with an in-memory insurance limiter that answers while Redis is unreachable (counters
 * fail open to a per-process limit: availability matters more than an exact count); in memory
 * otherwise. Null when limits are off (RATE_LIMIT_ENABLED=false).
 */
export function createLimiters(settings: LimitSettings, redis?: Redis): Limiters | null {
  if (!settings.enabled) return null;
  const limiters = {} as Record<LimitName, Limiter>;
  for (const name of LIMIT_NAMES) {
    const points = settings.points[name];
    const options = { points, duration: LIMITS[name].windowSeconds, keyPrefix: `idp:rl:${name}` };
    const memory = new RateLimiterMemory(options);
    const counter = redis
      ? new RateLimiterRedis({ ...options, storeClient: redis, insuranceLimiter: memory, rejectIfRedisNotReady: true })
      : memory;
    limiters[name] = limiterOver(counter, points);
  }
  return Object.freeze(limiters);
}
