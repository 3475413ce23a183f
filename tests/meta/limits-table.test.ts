import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it, vi } from "vitest";
import { loadEnv } from "../../lib/env.js";
import { LIMIT_NAMES, LIMITS, type LimitRule } from "../../lib/limits.js";
import { checkAll, createLimiters, take, type Limiters } from "../../lib/rate-limit.js";
import { freePort } from "../helpers/server.js";

/** lib/limits.ts is the one table of limits: docs/limits.md, .env.example and the settings follow it. */
const root = resolve(import.meta.dirname, "..", "..");
const rules = LIMIT_NAMES.map((name) => [name, LIMITS[name] as LimitRule] as const);

describe("the limits table", () => {
  it("is docs/limits.md's: every limit with its key, default and setting", () => {
    const limits = readFileSync(join(root, "docs/limits.md"), "utf8");
    const rows = new Map([...limits.matchAll(/^\| `(\w+)` \| ([^|]+) \| ([^|]+) \| ([^|]+) \|/gm)].map(([, name, key, dflt, setting]) => [name!, { key: key!, dflt: dflt!, setting: setting! }]));
    for (const [name, rule] of rules) {
      const row = rows.get(name);
      expect(row, name).toBeDefined();
      expect(row!.dflt.replace(/,/g, ""), name).toContain(`${rule.points} a ${rule.windowSeconds === 1 ? "second" : "minute"}`);
      expect(row!.setting.trim(), name).toBe(rule.setting ? `\`${rule.setting}\`` : "–");
    }
  });

  it("is .env.example's: every setting with the table's default", () => {
    const example = readFileSync(join(root, ".env.example"), "utf8");
    for (const [, rule] of rules) if (rule.setting) expect(example).toMatch(new RegExp(`^${rule.setting}=${rule.points}$`, "m"));
  });

  it("is docs/configuration.md's: every setting with the table's default", () => {
    const reference = readFileSync(join(root, "docs/configuration.md"), "utf8");
    for (const [, rule] of rules) if (rule.setting) expect(reference).toContain(`| \`${rule.setting}\` | \`${rule.points}\` |`);
  });

  it("reads each setting, and RATE_LIMIT_ENABLED=false turns them all off", () => {
    const dir = mkdtempSync(join(tmpdir(), "idp-limits-"));
    const base = { NODE_ENV: "test", BETTER_AUTH_SECRET: "x".repeat(32), DATA_DIR: dir };
    const config = loadEnv({ ...base, CLIENT_RATE_LIMIT: "7" });
    expect(config.limits.enabled).toBe(true);
    expect(config.limits.points.client).toBe(7);
    expect(config.limits.points.register).toBe(LIMITS.register.points);
    expect(() => loadEnv({ ...base, CLIENT_RATE_LIMIT: "0" })).toThrow(/CLIENT_RATE_LIMIT/);
    expect(createLimiters(loadEnv({ ...base, RATE_LIMIT_ENABLED: "false" }).limits)).toBeNull();
    rmSync(dir, { recursive: true, force: true });
  });
});

/** A Redis client of a port nothing listens on, that never retries. */
async function unreachableRedis() {
  const redis = new Redis(`redis://127.0.0.1:${await freePort()}`, { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
  redis.on("error", () => undefined);
  return redis;
}

/**
 * Runs `fn` with a Redis client, disconnected afterwards whatever happens: TEST_REDIS_URL's,
 * answering (`live`), or one that is never reached (`unreachable`).
 */
async function withRedis(kind: "live" | "unreachable", fn: (redis: Redis) => Promise<void>) {
  const redis = kind === "live" ? new Redis(process.env.TEST_REDIS_URL!) : await unreachableRedis();
  try {
    if (kind === "live") {
      await redis.ping();
      expect(redis.status).toBe("ready");
    }
    await fn(redis);
  } finally {
    redis.disconnect();
  }
}

describe("counters with Redis unreachable", () => {
  it("fail open to a limit per process (the insurance limiter), never an error", async () => {
    await withRedis("unreachable", async (redis) => {
      const points = { ...Object.fromEntries(LIMIT_NAMES.map((n) => [n, LIMITS[n].points])), register: 3 } as Record<(typeof LIMIT_NAMES)[number], number>;
      const limiters = createLimiters({ enabled: true, points }, redis)!;
      const results = [];
      for (let i = 0; i < 4; i++) results.push(await limiters.register.hit("203.0.113.9"));
      expect(results.map((r) => r.allowed)).toEqual([true, true, true, false]);
      expect(results[3]!.retryAfter).toBeGreaterThan(0);
      expect((await limiters.register.check("203.0.113.9")).allowed).toBe(false);
    });
  });
});

/** Budgets of 3 for `register` and `authFailures`, the table's for the rest. */
const smallBudgets = { ...Object.fromEntries(LIMIT_NAMES.map((n) => [n, LIMITS[n].points])), register: 3, authFailures: 3 } as Record<(typeof LIMIT_NAMES)[number], number>;

/** checkAll refuses on the first full counter and counts nothing itself. */
async function expectCheckedTogether(limiters: Limiters) {
  const [full, other] = [randomUUID(), randomUUID()];
  for (let i = 0; i < 3; i++) await limiters.register.hit(full);
  const refused = await checkAll(limiters, [["authFailures", other], ["register", full]]);
  expect(refused.allowed).toBe(false);
  expect(refused.retryAfter).toBeGreaterThan(0);
  expect(refused.retryAfter).toBeLessThanOrEqual(LIMITS.register.windowSeconds);
  // The full counter refuses in either place; counters under budget pass, and checking spent nothing.
  expect((await checkAll(limiters, [["register", full], ["authFailures", other]])).allowed).toBe(false);
  for (let i = 0; i < 5; i++) expect(await checkAll(limiters, [["authFailures", other], ["register", other]])).toEqual({ allowed: true, retryAfter: 0 });
  expect((await limiters.register.hit(other)).allowed).toBe(true);
}

describe("checking several budgets at once (checkAll)", () => {
  it("in memory: the first full counter refuses, with its Retry-After", async () => {
    await expectCheckedTogether(createLimiters({ enabled: true, points: smallBudgets })!);
  });

  it("in memory: a window that has ended has its budget again, though a busy event loop has not yet run the timer that deletes it", async () => {
    const limiters = createLimiters({ enabled: true, points: { ...smallBudgets, session: 2 } })!;
    expect(LIMITS.session.windowSeconds).toBe(1);
    const key = randomUUID();
    await limiters.session.hit(key);
    await limiters.session.hit(key);
    expect((await limiters.session.check(key)).allowed).toBe(false);
    // Busy past the window's end: no timer runs before the awaits below resolve.
    const until = Date.now() + 1_050;
    while (Date.now() < until);
    expect((await limiters.session.check(key)).allowed).toBe(true);
    expect((await checkAll(limiters, [["session", key]])).allowed).toBe(true);
  });

  it.runIf(process.env.TEST_REDIS_URL)("in Redis: one script reads the counters the limiters count", async () => {
    await withRedis("live", (redis) => expectCheckedTogether(createLimiters({ enabled: true, points: smallBudgets }, redis)!));
  });

  it("with Redis unreachable: each limiter's own check answers, from the insurance limiter", async () => {
    await withRedis("unreachable", (redis) => expectCheckedTogether(createLimiters({ enabled: true, points: smallBudgets }, redis)!));
  });
});

describe("the in-memory limiter: ended windows are swept from the front, in the order they end", () => {
  afterEach(() => void vi.useRealTimers());
  const sizeOf = (limiters: Limiters) => (limiters.session as unknown as { size(): number }).size();

  it("a key whose window is opened again moves behind the windows that end before it", () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const t0 = Date.UTC(2026, 10, 26, 12);
    const at = (ms: number) => vi.setSystemTime(t0 + ms);
    const limiters = createLimiters({ enabled: true, points: { ...smallBudgets, session: 5 } })!;
    const hit = (key: string) => (limiters.session as unknown as { hitNow(key: string): { allowed: boolean } }).hitNow(key);
    expect(LIMITS.session.windowSeconds).toBe(1);
    at(0);
    hit("a");
    hit("b");
    at(900);
    hit("c"); // ends at 1,900
    at(1000);
    hit("d"); // the sweep takes a and b; d ends at 2,000
    expect(sizeOf(limiters)).toBe(2);
    at(1950);
    hit("c"); // c's window ended (not yet swept): opened again, now ending at 2,950
    at(2100);
    hit("e"); // the sweep takes d, which ended before c's new window
    expect(sizeOf(limiters)).toBe(2);
    // c's new window counts from one: four more fit in its budget of five.
    for (let i = 0; i < 4; i++) expect(hit("c").allowed).toBe(true);
    expect(hit("c").allowed).toBe(false);
  });

  it("a flood of distinct keys is gone at the first sweep after its windows ended", () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const t0 = Date.UTC(2026, 10, 26, 12);
    vi.setSystemTime(t0);
    const limiters = createLimiters({ enabled: true, points: smallBudgets })!;
    const hit = (key: string) => (limiters.session as unknown as { hitNow(key: string): unknown }).hitNow(key);
    for (let i = 0; i < 10_000; i++) hit(`made-up-${i}`);
    expect(sizeOf(limiters)).toBe(10_000);
    vi.setSystemTime(t0 + 999);
    hit("live");
    expect(sizeOf(limiters)).toBe(10_001);
    vi.setSystemTime(t0 + 1000);
    hit("another");
    // The flood's windows ended at t0 + 1 s and are swept; the two opened since are kept.
    expect(sizeOf(limiters)).toBe(2);
  });
});

/**
 * take checks one budget (the address's failures) and charges another (the credential's) in one
 * step; refund gives a charge back. The counts are the limiters' own: check and hit see them.
 */
async function expectTaken(limiters: Limiters) {
  const [address, client, locked] = [randomUUID(), randomUUID(), randomUUID()];
  // Charged and allowed up to the budget (3), refused past it with a Retry-After, charged still.
  const taken = [];
  for (let i = 0; i < 4; i++) taken.push(await take(limiters, ["authFailures", address], ["register", client]));
  expect(taken.map((t) => [t.allowed, t.charged])).toEqual([[true, true], [true, true], [true, true], [false, true]]);
  expect(taken[3]!.retryAfter).toBeGreaterThan(0);
  expect(taken[3]!.retryAfter).toBeLessThanOrEqual(LIMITS.register.windowSeconds);
  // Giving back the refused one and one more leaves one request of budget: check sees it.
  await limiters.register.refund(client);
  expect((await limiters.register.check(client)).allowed).toBe(false);
  await limiters.register.refund(client);
  expect((await limiters.register.check(client)).allowed).toBe(true);
  expect((await limiters.register.hit(client)).allowed).toBe(true);
  expect((await limiters.register.check(client)).allowed).toBe(false);
  // An address out of failures is refused before anything is charged.
  for (let i = 0; i < 3; i++) await limiters.authFailures.hit(locked);
  const other = randomUUID();
  const refused = await take(limiters, ["authFailures", locked], ["register", other]);
  expect(refused).toMatchObject({ allowed: false, charged: false });
  expect(refused.retryAfter).toBeGreaterThan(0);
  for (let i = 0; i < 3; i++) expect((await limiters.register.hit(other)).allowed).toBe(true);
  expect((await limiters.register.hit(other)).allowed).toBe(false);
}

describe("one budget checked and another charged in one step (take, refund)", () => {
  it("in memory", async () => {
    await expectTaken(createLimiters({ enabled: true, points: smallBudgets })!);
  });

  it.runIf(process.env.TEST_REDIS_URL)("in Redis: one script, on the counters the limiters count", async () => {
    await withRedis("live", async (redis) => {
      const limiters = createLimiters({ enabled: true, points: smallBudgets }, redis)!;
      await expectTaken(limiters);
      // The charged key carries the limit's window, as rate-limiter-flexible's own count sets it.
      const key = randomUUID();
      await take(limiters, ["authFailures", randomUUID()], ["register", key]);
      const ttl = await redis.pttl(`idp:rl:register:${key}`);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(LIMITS.register.windowSeconds * 1000);
      expect(await redis.get(`idp:rl:register:${key}`)).toBe("1");
    });
  });

  it("with Redis unreachable: the insurance limiters answer", async () => {
    await withRedis("unreachable", (redis) => expectTaken(createLimiters({ enabled: true, points: smallBudgets }, redis)!));
  });
});
