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
  /** Gives back one request counted for `key` (a `take` whose request was then not answered). */
  refund(key: string): Promise<void>;
}

/** A counter per limit of lib/limits.ts. */
export type Limiters = Readonly<Record<LimitName, Limiter>>;

/** How each set of limiters checks several budgets at once (checkAll), by the set. */
const together = new WeakMap<Limiters, (checks: ReadonlyArray<readonly [LimitName, string]>) => Promise<LimitResult>>();
/** How each set of limiters checks one budget and counts another in one step (take), by the set. */
const takers = new WeakMap<Limiters, Taker>();

type Counted = readonly [LimitName, string];
type Taker = (checked: Counted, counted: Counted) => TakeResult | Promise<TakeResult>;

export interface TakeResult extends LimitResult {
  /** Whether the counted budget was charged (then `refund` it when the request is not answered). */
  charged: boolean;
}

/**
 * One step for a request the caller answers only once its credential is verified (the fast
 * lane): whether `checked` (the address's failures) has budget left, and if so `counted` (the
 * credential's budget) charged and checked. With Redis one script, one round trip, instead of
 * a read before the answer and a write after it. A request the caller then does not answer
 * itself (a refusal, an unverified credential) gives the count back with `refund` before the
 * app counts it its own way, so only answered requests stay counted.
 */
export function take(limiters: Limiters, checked: Counted, counted: Counted): TakeResult | Promise<TakeResult> {
  return (takers.get(limiters) ?? eachTaken(limiters))(checked, counted);
}

/**
 * A step's result, as one literal: a spread of the limit's result grown by `charged` took a new
 * hidden class on every request in V8 (the fast lane takes one step a request).
 */
const taken = (result: LimitResult, charged: boolean): TakeResult => ({ allowed: result.allowed, retryAfter: result.retryAfter, charged });

function eachTaken(limiters: Limiters): Taker {
  return async ([checkedName, checkedKey], [countedName, countedKey]) => {
    const checked = await limiters[checkedName].check(checkedKey);
    if (!checked.allowed) return taken(checked, false);
    return taken(await limiters[countedName].hit(countedKey), true);
  };
}

/**
 * KEYS: the checked counter, the counted one; ARGV: the checked budget, the counted budget, the
 * counted window in seconds. The counted key is charged as rate-limiter-flexible's RateLimiterRedis
 * charges it (set NX with the window, incrby, the window again when it lost its expiry). Returns
 * {charged (0/1), milliseconds until a full counter resets (0: allowed)}.
 */
const TAKE_SCRIPT = `
local failed = tonumber(redis.call("get", KEYS[1]) or "0")
if failed >= tonumber(ARGV[1]) then
  local ttl = redis.call("pttl", KEYS[1])
  if ttl < 1 then ttl = 1 end
  return {0, ttl}
end
redis.call("set", KEYS[2], 0, "EX", ARGV[3], "NX")
local used = redis.call("incrby", KEYS[2], 1)
local ttl = redis.call("pttl", KEYS[2])
if ttl == -1 then
  redis.call("expire", KEYS[2], ARGV[3])
  ttl = 1000 * ARGV[3]
end
if used > tonumber(ARGV[2]) then
  if ttl < 1 then ttl = 1 end
  return {1, ttl}
end
return {1, 0}`;

type TakingRedis = Redis & { idpTakeLimit(checkedKey: string, countedKey: string, checkedBudget: number, countedBudget: number, windowSeconds: number): Promise<[number, number]> };

function takenInRedis(redis: Redis, counters: Record<LimitName, RateLimiterAbstract>, settings: LimitSettings, each: Taker): Taker {
  if (!("idpTakeLimit" in redis)) redis.defineCommand("idpTakeLimit", { numberOfKeys: 2, lua: TAKE_SCRIPT });
  const scripted = redis as unknown as TakingRedis;
  return async (checked, counted) => {
    if (redis.status !== "ready") return each(checked, counted);
    try {
      const [charged, ms] = await scripted.idpTakeLimit(
        counters[checked[0]].getKey(checked[1]),
        counters[counted[0]].getKey(counted[1]),
        settings.points[checked[0]],
        settings.points[counted[0]],
        LIMITS[counted[0]].windowSeconds,
      );
      return ms > 0 ? { allowed: false, retryAfter: Math.max(1, Math.ceil(ms / 1000)), charged: charged === 1 } : { allowed: true, retryAfter: 0, charged: charged === 1 };
    } catch {
      // Redis failed mid-way (the script ran or not, unknown): the limiters' own steps answer.
      return each(checked, counted);
    }
  };
}

/**
 * Whether every `[limit, key]` has budget left, without counting anything: the first refusal,
 * else allowed. With Redis, one script reads every counter (one round trip, one command,
 * instead of a MULTI of GET and PTTL per counter); with Redis unreachable, or in memory,
 * each limiter's own check.
 */
export function checkAll(limiters: Limiters, checks: ReadonlyArray<readonly [LimitName, string]>): Promise<LimitResult> {
  return (together.get(limiters) ?? eachChecked(limiters))(checks);
}

function eachChecked(limiters: Limiters) {
  return async (checks: ReadonlyArray<readonly [LimitName, string]>): Promise<LimitResult> => {
    const results = await Promise.all(checks.map(([name, key]) => limiters[name].check(key)));
    return results.find((r) => !r.allowed) ?? { allowed: true, retryAfter: 0 };
  };
}

/**
 * KEYS: the counters (rate-limiter-flexible's keys), ARGV: each one's budget. Returns 0 when
 * every counter is under its budget, else the milliseconds until the first full one resets.
 */
const CHECK_ALL_SCRIPT = `
for i = 1, #KEYS do
  local used = tonumber(redis.call("get", KEYS[i]) or "0")
  if used >= tonumber(ARGV[i]) then
    local ttl = redis.call("pttl", KEYS[i])
    if ttl < 1 then return 1 end
    return ttl
  end
end
return 0`;

type ScriptedRedis = Redis & { idpCheckAllLimits(count: number, ...keysThenBudgets: (string | number)[]): Promise<number> };

function checkedInRedis(redis: Redis, counters: Record<LimitName, RateLimiterAbstract>, points: Readonly<Record<LimitName, number>>, each: ReturnType<typeof eachChecked>) {
  if (!("idpCheckAllLimits" in redis)) redis.defineCommand("idpCheckAllLimits", { lua: CHECK_ALL_SCRIPT });
  const scripted = redis as unknown as ScriptedRedis;
  return async (checks: ReadonlyArray<readonly [LimitName, string]>): Promise<LimitResult> => {
    if (redis.status !== "ready") return each(checks);
    try {
      const keys = checks.map(([name, key]) => counters[name].getKey(key));
      const ms = await scripted.idpCheckAllLimits(checks.length, ...keys, ...checks.map(([name]) => points[name]));
      return ms > 0 ? { allowed: false, retryAfter: Math.max(1, Math.ceil(ms / 1000)) } : { allowed: true, retryAfter: 0 };
    } catch {
      // Redis failed mid-way: the limiters' own checks answer (from the insurance limiter).
      return each(checks);
    }
  };
}

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
    async refund(key) {
      // A store failure leaves the count as it is (fails closed by one request, never a 500).
      await counter.reward(key, 1).catch(() => undefined);
    },
    async check(key) {
      const res = await counter.get(key).catch(() => null);
      // An in-memory counter whose window has ended is still read back until its timer deletes
      // it, which a busy event loop runs late: an ended window has its whole budget again.
      if (!res || res.consumedPoints < points || res.msBeforeNext <= 0) return { allowed: true, retryAfter: 0 };
      return { allowed: false, retryAfter: retryAfterOf(res) };
    },
  };
}

/** A limiter of this process only, whose steps answer at once (no promise, no timer per key). */
interface MemoryLimiter extends Limiter {
  hitNow(key: string): LimitResult;
  checkNow(key: string): LimitResult;
  /** How many windows it holds, ended ones not yet swept included (tests/meta/limits-table.test.ts). */
  size(): number;
}

const ALLOWED: LimitResult = Object.freeze({ allowed: true, retryAfter: 0 });

/**
 * A fixed window per key, opened by its first request (as rate-limiter-flexible's counters
 * count): `points` requests in `windowSeconds`, every request counted, refused ones too.
 *
 * Windows are kept in the order they end: every window lasts `windowSeconds`, and a key whose
 * window is opened again is moved to the end. Once a window (as requests come), the sweep
 * deletes ended windows from the front and stops at the first that has not ended: its cost is
 * the windows it deletes, not every key held (many distinct keys, e.g. a flood of made-up
 * client ids, cost no more per request than a few).
 */
function memoryLimiter(points: number, windowSeconds: number): MemoryLimiter {
  const windows = new Map<string, { used: number; resetAt: number }>();
  const windowMs = windowSeconds * 1000;
  let sweepAt = 0;
  const refused = (resetAt: number, now: number): LimitResult => ({ allowed: false, retryAfter: Math.max(1, Math.ceil((resetAt - now) / 1000)) });
  function open(key: string, now: number) {
    if (now >= sweepAt) {
      sweepAt = now + windowMs;
      for (const [k, w] of windows) {
        if (w.resetAt > now) break;
        windows.delete(k);
      }
    }
    const current = windows.get(key);
    return current && current.resetAt > now ? current : undefined;
  }
  const limiter: MemoryLimiter = {
    hitNow(key) {
      const now = Date.now();
      let window = open(key, now);
      if (!window) {
        // At the end of the order (an ended window of the key, not yet swept, leaves its place).
        windows.delete(key);
        windows.set(key, (window = { used: 0, resetAt: now + windowMs }));
      }
      window.used++;
      return window.used <= points ? ALLOWED : refused(window.resetAt, now);
    },
    checkNow(key) {
      const now = Date.now();
      const window = open(key, now);
      return window && window.used >= points ? refused(window.resetAt, now) : ALLOWED;
    },
    hit: async (key) => limiter.hitNow(key),
    check: async (key) => limiter.checkNow(key),
    size: () => windows.size,
    async refund(key) {
      const window = open(key, Date.now());
      if (window && window.used > 0) window.used--;
    },
  };
  return limiter;
}

/** take for limiters that are all in this process: at once. */
function takenNow(limiters: Readonly<Record<LimitName, MemoryLimiter>>): Taker {
  return ([checkedName, checkedKey], [countedName, countedKey]) => {
    const checked = limiters[checkedName].checkNow(checkedKey);
    if (!checked.allowed) return taken(checked, false);
    return taken(limiters[countedName].hitNow(countedKey), true);
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
  if (!redis) {
    const limiters = {} as Record<LimitName, MemoryLimiter>;
    for (const name of LIMIT_NAMES) limiters[name] = memoryLimiter(settings.points[name], LIMITS[name].windowSeconds);
    const frozen = Object.freeze(limiters);
    takers.set(frozen, takenNow(frozen));
    return frozen;
  }
  const limiters = {} as Record<LimitName, Limiter>;
  const counters = {} as Record<LimitName, RateLimiterAbstract>;
  for (const name of LIMIT_NAMES) {
    const points = settings.points[name];
    const options = { points, duration: LIMITS[name].windowSeconds, keyPrefix: `idp:rl:${name}` };
    const counter = new RateLimiterRedis({ ...options, storeClient: redis, insuranceLimiter: new RateLimiterMemory(options), rejectIfRedisNotReady: true });
    limiters[name] = limiterOver(counter, points);
    counters[name] = counter;
  }
  const frozen = Object.freeze(limiters);
  together.set(frozen, checkedInRedis(redis, counters, settings.points, eachChecked(frozen)));
  takers.set(frozen, takenInRedis(redis, counters, settings, eachTaken(frozen)));
  return frozen;
}
