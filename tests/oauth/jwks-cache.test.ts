import type { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { jwksCache, JWKS_VERSION_KEY } from "../../lib/jwks-cache.js";

/** A key table and a Redis of one key, both counting their reads. */
function fixtures(opts: { redisDown?: boolean } = {}) {
  const table: { id: string; createdAt: Date }[] = [{ id: "k1", createdAt: new Date() }];
  const reads = { table: 0, redis: 0 };
  let version: string | null = null;
  const adapter = {
    async findMany() {
      reads.table += 1;
      return [...table];
    },
    async create({ data }: { data: { id: string; createdAt: Date } }) {
      table.push(data);
      return data;
    },
  };
  const redis = {
    async get(key: string) {
      reads.redis += 1;
      if (opts.redisDown) throw new Error("connection refused");
      return key === JWKS_VERSION_KEY ? version : null;
    },
    async incr() {
      if (opts.redisDown) throw new Error("connection refused");
      version = String(Number(version ?? 0) + 1);
      return Number(version);
    },
  } as unknown as Redis;
  const ctx = { context: { adapter } };
  /** Another instance's key: a row in the shared table and a bump of the shared version. */
  const elsewhere = async (id: string) => {
    table.push({ id, createdAt: new Date() });
    await redis.incr(JWKS_VERSION_KEY);
  };
  return { table, reads, redis, ctx, elsewhere };
}

const ids = (rows: { id: string }[]) => rows.map((r) => r.id);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("signing-key cache (lib/jwks-cache.ts)", () => {
  it("reads the table once per interval, and again as soon as Redis says another process made a key", async () => {
    const f = fixtures();
    const cache = jwksCache({ redis: f.redis, checkMs: 20 });
    expect(ids(await cache.adapter.getJwks(f.ctx))).toEqual(["k1"]);
    expect(ids(await cache.adapter.getJwks(f.ctx))).toEqual(["k1"]);
    expect(f.reads.table).toBe(1);
    // Redis is asked at most once per checkMs, not per read.
    expect(f.reads.redis).toBe(1);

    await f.elsewhere("k2");
    expect(ids(await cache.adapter.getJwks(f.ctx))).toEqual(["k1"]); // not due yet
    const generation = cache.generation();
    await sleep(30);
    expect(ids(await cache.adapter.getJwks(f.ctx))).toEqual(["k1", "k2"]);
    expect(cache.generation()).toBeGreaterThan(generation);
    expect(f.reads.table).toBe(2);
  });

  it("a key made here is read back at once and its version bump does not cause a second read", async () => {
    const f = fixtures();
    const cache = jwksCache({ redis: f.redis, checkMs: 0 });
    await cache.adapter.getJwks(f.ctx);
    await cache.adapter.createJwk({ id: "k2" }, f.ctx);
    expect(ids(await cache.adapter.getJwks(f.ctx))).toEqual(["k1", "k2"]);
    await cache.adapter.getJwks(f.ctx);
    expect(f.reads.table).toBe(2);
  });

  it("keeps serving from the table when Redis is unreachable, bounded by the TTL", async () => {
    const f = fixtures({ redisDown: true });
    const cache = jwksCache({ redis: f.redis, checkMs: 0, ttlMs: 20 });
    expect(ids(await cache.adapter.getJwks(f.ctx))).toEqual(["k1"]);
    await expect(cache.adapter.createJwk({ id: "k2" }, f.ctx)).resolves.toMatchObject({ id: "k2" });
    f.table.push({ id: "k3", createdAt: new Date() });
    await sleep(30);
    expect(ids(await cache.adapter.getJwks(f.ctx))).toEqual(["k1", "k2", "k3"]);
  });
});
