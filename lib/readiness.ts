import type { Redis } from "ioredis";
import { sql } from "kysely";
import type { DatabaseHandle } from "./db/connection.js";
import { pendingMigrations } from "./migrate.js";

export type CheckResult = "ok" | "not configured" | string;

export interface ReadinessReport {
  ready: boolean;
  checks: { database: CheckResult; redis: CheckResult; migrations: CheckResult };
}

/** Each check's own deadline: a readiness probe answers quickly even when a dependency hangs. */
const CHECK_TIMEOUT_MS = 2000;

async function within<T>(ms: number, work: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const failure = (err: unknown) => `failing: ${err instanceof Error ? err.message : String(err)}`.slice(0, 200);

/**
 * What /readyz reports: the database answers a query, Redis (when configured) answers PING, and
 * no schema/ migration is pending (another instance or `npm run db:migrate` may be behind or
 * ahead). Migrations are checked at most every `migrationsEveryMs`; they change only on deploys.
 */
export function createReadiness(options: { database: DatabaseHandle; redis?: Redis; migrationsEveryMs?: number }) {
  const { database, redis } = options;
  let migrations: { at: number; result: CheckResult } | null = null;
  const every = options.migrationsEveryMs ?? 30_000;

  async function checkMigrations(): Promise<CheckResult> {
    if (migrations && Date.now() - migrations.at < every) return migrations.result;
    const pending = await pendingMigrations(database);
    const result = pending.length ? `pending: ${pending.join(", ")}`.slice(0, 200) : "ok";
    migrations = { at: Date.now(), result };
    return result;
  }

  return async function readiness(): Promise<ReadinessReport> {
    const [db, cache, schema] = await Promise.all([
      within(CHECK_TIMEOUT_MS, () => sql`select 1`.execute(database.db)).then(() => "ok", failure),
      redis ? within(CHECK_TIMEOUT_MS, () => redis.ping()).then(() => "ok", failure) : Promise.resolve("not configured"),
      within(CHECK_TIMEOUT_MS, checkMigrations).catch(failure),
    ]);
    const checks = { database: db, redis: cache, migrations: schema };
    return { ready: db === "ok" && (cache === "ok" || cache === "not configured") && schema === "ok", checks };
  };
}
