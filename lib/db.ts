import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import SQLite from "better-sqlite3";
import { Kysely, PostgresDialect, SqliteDialect, type SqliteDatabase } from "kysely";
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
  // Checkpoint the WAL every ~40 MiB (10,000 pages) rather than every 4 MiB: each checkpoint
  // syncs the database file, and at the default a token refresh (three writes) paid for one
  // every few dozen requests. journal_size_limit trims the WAL file back after a checkpoint.
  sqlite.pragma("wal_autocheckpoint = 10000");
  sqlite.pragma("journal_size_limit = 67108864");
  const db = new Kysely<any>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
  return { db, type: "sqlite", close: () => db.destroy() };
}

/**
 * Kysely prepares every query anew (`db.prepare(sql)` per execution), and compiling SQL
 * was a tenth of the CPU of a session or token lookup. The queries better-auth and our
 * routes send are a small, fixed set of texts with `?` parameters, so prepared statements
 * are kept by SQL text and reused (better-sqlite3 binds fresh parameters on every run).
 * A statement still being iterated (`busy`, a streamed query) is never handed out twice;
 * past `max` texts the oldest is dropped.
 */
function withStatementCache(sqlite: SQLite.Database, max = 1000): SqliteDatabase {
  const statements = new Map<string, SQLite.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(sql: string) {
      const cached = statements.get(sql);
      if (cached && !cached.busy) return cached;
      const statement = sqlite.prepare(sql);
      if (!cached && statements.size >= max) statements.delete(statements.keys().next().value!);
      statements.set(sql, statement);
      return statement;
    },
  };
}

/**
 * Values in the shape each driver binds, matching how better-auth stores them: SQLite keeps
 * dates as ISO-8601 text and booleans as 0/1; PostgreSQL takes Date and boolean.
 */
export function dbDate(type: Database["type"], date: Date): Date | string {
  return type === "sqlite" ? date.toISOString() : date;
}
export function dbBool(type: Database["type"], value: boolean): boolean | number {
  return type === "sqlite" ? (value ? 1 : 0) : value;
}
/** Reading back: either driver's representation to a Date / boolean. */
export function asDate(value: unknown): Date {
  return value instanceof Date ? value : new Date(String(value));
}
export function asBool(value: unknown): boolean {
  return value === true || value === 1 || value === "1" || value === "true";
}
