import type { Redis } from "ioredis";

export interface LimitResult {
  allowed: boolean;
  /** Seconds until the current window ends (the Retry-After value). */
  retryAfter: number;
}

/** A fixed-window counter: at most `max` hits per key per window. */
export interface WindowLimiter {
  hit(key: string): Promise<LimitResult>;
}

export interface WindowOptions {
  max: number;
  windowMs: number;
}

const result = (count: number, max: number, windowEnd: number, now: number): LimitResult => ({
  allowed: count <= max,
  retryAfter: Math.max(1, Math.ceil((windowEnd - now) / 1000)),
});

/** Process-local counters (spec, Limits: the sync limit is per process), bounded in memory. */
export function memoryWindowLimiter({ max, windowMs }: WindowOptions, maxKeys = 100_000): WindowLimiter {
  const windows = new Map<string, { end: number; count: number }>();
  return {
    async hit(key) {
      const now = Date.now();
      let entry = windows.get(key);
      if (!entry || entry.end <= now) {
        if (windows.size >= maxKeys) for (const [k, w] of windows) if (w.end <= now) windows.delete(k);
        // Still full of live windows: forget the oldest rather than grow without bound.
        if (windows.size >= maxKeys) windows.delete(windows.keys().next().value as string);
        entry = { end: now + windowMs, count: 0 };
        windows.set(key, entry);
      }
      entry.count += 1;
      return result(entry.count, max, entry.end, now);
    },
  };
}

/**
 * Counters in Redis, shared by every instance. If Redis fails the process-local limiter
 * answers instead: a limit still applies, and an outage does not take the route down.
 */
export function redisWindowLimiter(redis: Redis, { max, windowMs }: WindowOptions, prefix: string): WindowLimiter {
  const fallback = memoryWindowLimiter({ max, windowMs });
  return {
    async hit(key) {
      const now = Date.now();
      const start = Math.floor(now / windowMs) * windowMs;
      const name = `${prefix}${key}:${start}`;
      try {
        const replies = await redis.multi().incr(name).pexpire(name, windowMs + 1000).exec();
        const count = Number(replies?.[0]?.[1]);
        if (!Number.isFinite(count)) throw new Error("no count from redis");
        return result(count, max, start + windowMs, now);
      } catch {
        return fallback.hit(key);
      }
    },
  };
}

/**
 * The window limiter a deployment uses: counters in Redis when there is one (shared by every
 * instance), in memory otherwise; null when limits are off (RATE_LIMIT_ENABLED=false).
 */
export function windowLimiter(deployment: { enabled: boolean; redis?: Redis }, limit: WindowOptions, prefix: string): WindowLimiter | null {
  if (!deployment.enabled) return null;
  return deployment.redis ? redisWindowLimiter(deployment.redis, limit, prefix) : memoryWindowLimiter(limit);
}
