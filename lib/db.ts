import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import SQLite from "better-sqlite3";
import { Kysely, PostgresDialect, SqliteDialect } from "kysely";
import pg from "pg";
import type { DatabaseTarget } from "./env.js";

/** The one Kysely instance shared by better-auth and our own routes. */
export interface Database {
  readonly db: Kysely<any>;
  readonly type: "sqlite" | "postgres";
  close(): Promise<void>;
}

export function createDb(target: DatabaseTarget, onPoolError: (err: Error) => void = () => {}): Database {
  if (target.kind === "postgres") {
    const pool = new pg.Pool({ connectionString: target.url, max: 10 });
    // An idle client dropped by the server (restart, failover, admin) must not crash the process:
    // the pool replaces it on next use.
    pool.on("error", onPoolError);
    const db = new Kysely<any>({ dialect: new PostgresDialect({ pool }) });
    return { db, type: "postgres", close: () => db.destroy() };
  }
  if (target.file !== ":memory:") mkdirSync(dirname(target.file), { recursive: true });
  const sqlite = new SQLite(target.file);
  // WAL lets readers run beside the single writer; a busy timeout queues writers instead of failing.
  sqlite.pragma("journal_mode = WAL");
  sqlite.pragma("synchronous = NORMAL");
  sqlite.pragma("busy_timeout = 5000");
  sqlite.pragma("foreign_keys = ON");
  const db = new Kysely<any>({ dialect: new SqliteDialect({ database: sqlite }) });
  return { db, type: "sqlite", close: () => db.destroy() };
}
