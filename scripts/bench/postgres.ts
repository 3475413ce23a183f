import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import pg from "pg";

/** Where --db=postgres runs: the machine's PostgreSQL (trust auth, user postgres) and Redis. */
const POSTGRES = "postgres://postgres@127.0.0.1:5432";
const REDIS = "redis://127.0.0.1:6379/12";

/**
 * --db=postgres: a throwaway PostgreSQL database for this run, and Redis database 12 emptied
 * first (no earlier run's rate-limit counters count). `drop()` removes the database after.
 */
export async function throwawayPostgres(): Promise<{ databaseUrl: string; redisUrl: string; drop(): Promise<void> }> {
  const name = `idp_bench_${Date.now().toString(36)}_${randomBytes(3).toString("hex")}`;
  const admin = new pg.Client({ connectionString: `${POSTGRES}/postgres` });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const redis = new Redis(REDIS, { lazyConnect: true });
  await redis.connect();
  await redis.flushdb();
  await redis.quit();
  return {
    databaseUrl: `${POSTGRES}/${name}`,
    redisUrl: REDIS,
    async drop() {
      const again = new pg.Client({ connectionString: `${POSTGRES}/postgres` });
      await again.connect();
      await again.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await again.end();
    },
  };
}
