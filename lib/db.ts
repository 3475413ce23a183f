import { AsyncLocalStorage } from "node:async_hooks";
import { mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import { dirname } from "node:path";
import SQLite from "better-sqlite3";
import { CompiledQuery, Kysely, PostgresDialect, SqliteDialect, type DatabaseConnection, type Dialect, type SqliteDatabase } from "kysely";
import pg from "pg";
import type { DatabaseTarget } from "./env.js";
import { isUnavailable, isUniqueViolation, ServiceUnavailable, UniqueViolation } from "./errors.js";

/** The one Kysely instance shared by better-auth and our own routes. */
export interface Database {
  readonly db: Kysely<any>;
  readonly type: "sqlite" | "postgres";
  /** PostgreSQL: the connection pool's counts, for the metrics (lib/metrics.ts watchPool). */
  readonly pool?: Pick<pg.Pool, "totalCount" | "idleCount" | "waitingCount">;
  /**
   * Runs `fn` as one transaction on one connection: every query of `fn` (and of whatever it
   * calls, better-auth's adapter included) uses it, nested transactions become savepoints.
   * Committed when `keep(result)` holds, rolled back when it does not or `fn` throws. A commit
   * that fails throws (a dropped database: `ServiceUnavailable`).
   */
  atomically<T>(fn: () => Promise<T>, keep?: (result: T) => boolean): Promise<T>;
  close(): Promise<void>;
}

export interface DbOptions {
  /** A pg pool lost an idle client (logged; the pool replaces it). */
  onPoolError?: (err: Error) => void;
  /**
   * SQLite: copy the write-ahead log back into the database file from a worker thread
   * (the server), instead of inside whichever request's commit crosses the threshold.
   */
  backgroundCheckpoint?: boolean;
}

export function createDb(target: DatabaseTarget, options: DbOptions = {}): Database {
  const onPoolError = options.onPoolError ?? (() => {});
  if (target.kind === "postgres") {
    // A connection attempt that gets no answer gives up after 5 s (a request fails with a 503,
    // lib/errors.ts ServiceUnavailable) instead of waiting for ever; idle clients are let go after
    // 30 s, so fewer of them are left to find dead after a database restart.
    const pool = new pg.Pool({ connectionString: target.url, max: 10, connectionTimeoutMillis: 5000, idleTimeoutMillis: 30_000 });
    // A connection dropped by the server (restart, failover, admin) must not crash the process.
    // Idle in the pool, its error reaches the pool's listener and the pool replaces it. Checked
    // out between two queries (in a transaction, say), its error goes to the client itself, which
    // pg throws as an unhandled 'error' event without a listener: the next query on it fails (a
    // 503) and the pool drops it on release.
    pool.on("error", onPoolError);
    pool.on("connect", (client) => client.on("error", onPoolError));
    const units = new AsyncLocalStorage<Unit>();
    const db = new Kysely<any>({ dialect: withConnectionRules(new PostgresDialect({ pool }), units) });
    return { db, type: "postgres", pool, atomically: atomicallyOn(units), close: () => db.destroy() };
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
  // With the background checkpointer this is only the fallback should the worker stop.
  sqlite.pragma("wal_autocheckpoint = 10000");
  sqlite.pragma("journal_size_limit = 67108864");
  const checkpointer = options.backgroundCheckpoint && target.file !== ":memory:" ? startCheckpointer(target.file) : undefined;
  const units = new AsyncLocalStorage<Unit>();
  const db = new Kysely<any>({ dialect: withConnectionRules(new SqliteDialect({ database: withStatementCache(sqlite) }), units, sqliteParameters) });
  return {
    db,
    type: "sqlite",
    atomically: atomicallyOn(units),
    close: async () => {
      await checkpointer?.stop();
      await db.destroy();
    },
  };
}

/**
 * A worker thread with its own connection runs `PRAGMA wal_checkpoint(PASSIVE)` every
 * `intervalMs`. A passive checkpoint never blocks the server's reads or writes (it copies
 * what it can and leaves the rest for the next round), and its copy and fsync of the
 * database file then happen beside the event loop instead of inside a request's commit.
 * Once every frame is copied, the next write starts the WAL over from its beginning, so
 * it stays small. Errors are reported to the parent only as a stop; the connection's own
 * auto-checkpoint remains as the fallback.
 */
function startCheckpointer(file: string, intervalMs = 250): { stop(): Promise<void> } {
  const source = `
    const { parentPort, workerData } = require("node:worker_threads");
    const Database = require(workerData.driver);
    const db = new Database(workerData.file, { fileMustExist: true });
    db.pragma("busy_timeout = 0");
    const timer = setInterval(() => {
      try { db.pragma("wal_checkpoint(PASSIVE)"); } catch {}
    }, workerData.intervalMs);
    parentPort.on("message", () => {
      clearInterval(timer);
      try { db.close(); } catch {}
      parentPort.close();
    });`;
  const worker = new Worker(source, {
    eval: true,
    workerData: { file, intervalMs, driver: createRequire(import.meta.url).resolve("better-sqlite3") },
  });
  worker.unref();
  worker.on("error", () => {});
  const exited = new Promise<void>((done) => worker.once("exit", () => done()));
  return {
    async stop() {
      worker.postMessage("stop");
      await Promise.race([exited, new Promise((done) => setTimeout(done, 2000).unref())]);
      await worker.terminate();
    },
  };
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
 * One `Database.atomically` call. Its reads run as usual until its first write, which takes a
 * connection and begins a transaction on it (`conn`); every later query in the same async
 * context uses that connection until `finish` ends it. Opening at the first write keeps the
 * connection (SQLite's only one) held for the shortest time, and never while the unit waits on
 * work that reads (another request's, say).
 */
interface Unit {
  open: boolean;
  /** A statement of the unit failed (and was caught): PostgreSQL would answer its COMMIT with a rollback. */
  failed?: unknown;
  conn?: Promise<DatabaseConnection>;
  finish?: (commit: boolean) => Promise<void>;
}

function atomicallyOn(units: AsyncLocalStorage<Unit>): Database["atomically"] {
  return async (fn, keep = () => true) => {
    const unit: Unit = { open: true };
    const end = async (commit: boolean) => {
      unit.open = false;
      await unit.conn?.catch(() => {});
      await unit.finish?.(commit);
    };
    let result;
    try {
      result = await units.run(unit, fn);
    } catch (err) {
      await end(false).catch(() => {});
      throw err;
    }
    // A caught failure leaves a PostgreSQL transaction aborted, and its COMMIT rolls back in
    // silence: never answer as if it had been kept.
    if (unit.failed !== undefined && keep(result)) {
      await end(false).catch(() => {});
      throw unit.failed;
    }
    await end(keep(result));
    return result;
  };
}

/** A query that only reads: a select (not `for update`), Kysely-built or raw. */
function isRead(query: CompiledQuery): boolean {
  if (query.query.kind === "SelectQueryNode") return !/\bfor\s+(update|share|no key update|key share)\b/i.test(query.sql);
  return /^\s*select\b/i.test(query.sql) && !/\bfor\s+(update|share|no key update|key share)\b/i.test(query.sql);
}

const wrapped = Symbol("connection wrapped");

/** The driver's error as the one our error families know, when there is one. */
function asKnownError(err: unknown): unknown {
  if (isUniqueViolation(err)) return new UniqueViolation(err as { code?: unknown });
  if (isUnavailable(err)) return new ServiceUnavailable("database", err);
  return err;
}

/**
 * Every query, ours and better-auth's, raises a unique-constraint clash as `UniqueViolation`
 * (a 409 in either error family) and a database that cannot be reached (refused, dropped,
 * restarting, a lock not granted in time) as `ServiceUnavailable` (a 503), instead of the
 * driver's own error (a 500), and binds its
 * parameters through `bind` (SQLite: `sqliteParameters`). Done on each connection the driver
 * hands out, in place: the drivers keep private state on their connection objects
 * (PostgreSQL's release), so a wrapper object would not do.
 */
function withConnectionRules(dialect: Dialect, units: AsyncLocalStorage<Unit>, bind: (query: CompiledQuery) => CompiledQuery = (query) => query): Dialect {
  const wrap = (conn: DatabaseConnection & { [wrapped]?: true }) => {
    if (conn[wrapped]) return conn;
    const executeQuery = conn.executeQuery.bind(conn);
    const streamQuery = conn.streamQuery.bind(conn);
    conn.executeQuery = async (query) => {
      try {
        return await executeQuery(bind(query));
      } catch (err) {
        throw asKnownError(err);
      }
    };
    conn.streamQuery = (query, chunkSize) => streamQuery(bind(query), chunkSize);
    conn[wrapped] = true;
    return conn;
  };
  return {
    createAdapter: () => dialect.createAdapter(),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createDriver() {
      const driver = dialect.createDriver();
      const acquireConnection = driver.acquireConnection.bind(driver);
      const releaseConnection = driver.releaseConnection.bind(driver);
      const begin = driver.beginTransaction.bind(driver);
      const commit = driver.commitTransaction.bind(driver);
      const rollback = driver.rollbackTransaction.bind(driver);
      const acquire = async () => {
        try {
          return wrap(await acquireConnection());
        } catch (err) {
          throw asKnownError(err);
        }
      };
      // Connections held by a unit (Database.atomically), each with its open savepoints.
      const pinned = new Map<DatabaseConnection, string[]>();
      const open = async (unit: Unit) => {
        const conn = await acquire();
        try {
          await begin(conn, {});
        } catch (err) {
          await releaseConnection(conn);
          throw err;
        }
        pinned.set(conn, []);
        unit.finish = async (keep) => {
          try {
            if (keep) await commit(conn);
            else await rollback(conn).catch(() => {});
          } finally {
            pinned.delete(conn);
            await releaseConnection(conn);
          }
        };
        return conn;
      };
      const held = (unit: Unit) => (unit.conn ??= open(unit));
      // Inside a unit, Kysely gets a stand-in: a read before the unit's first write runs on a
      // connection of its own; a write, a transaction, and anything after them, on the unit's.
      const standIn = (unit: Unit): DatabaseConnection => ({
        async executeQuery(query) {
          if (unit.open && (unit.conn || !isRead(query))) {
            try {
              return await (await held(unit)).executeQuery(query);
            } catch (err) {
              unit.failed = err;
              throw err;
            }
          }
          const conn = await acquire();
          try {
            return await conn.executeQuery(query);
          } finally {
            await releaseConnection(conn);
          }
        },
        async *streamQuery(query, chunkSize) {
          yield* (await held(unit)).streamQuery(query, chunkSize);
        },
      });
      const standIns = new WeakMap<DatabaseConnection, Unit>();
      driver.acquireConnection = async () => {
        const unit = units.getStore();
        if (!unit?.open) return acquire();
        const conn = standIn(unit);
        standIns.set(conn, unit);
        return conn;
      };
      // The unit's connection is released once, when the unit ends; a stand-in holds nothing.
      driver.releaseConnection = async (conn) => {
        if (!pinned.has(conn) && !standIns.has(conn)) await releaseConnection(conn);
      };
      // A transaction inside a unit (better-auth's adapter.transaction) is a savepoint of it.
      // Kysely runs the whole transaction on the connection it began it on.
      const savepoint = (conn: DatabaseConnection, sql: string) => conn.executeQuery(CompiledQuery.raw(sql)).then(() => {});
      const inner = async (conn: DatabaseConnection) => {
        const unit = standIns.get(conn);
        return unit ? held(unit) : conn;
      };
      driver.beginTransaction = async (conn, settings) => {
        const target = await inner(conn);
        const stack = pinned.get(target);
        if (!stack) return begin(target, settings);
        const name = `unit_${stack.length + 1}`;
        stack.push(name);
        return savepoint(target, `savepoint ${name}`);
      };
      driver.commitTransaction = async (conn) => {
        const target = await inner(conn);
        const name = pinned.get(target)?.pop();
        return name ? savepoint(target, `release savepoint ${name}`) : commit(target);
      };
      driver.rollbackTransaction = async (conn) => {
        const target = await inner(conn);
        const name = pinned.get(target)?.pop();
        if (!name) return rollback(target);
        await savepoint(target, `rollback to savepoint ${name}`);
        // Rolled back to before the failure: the unit's transaction is usable again.
        const unit = standIns.get(conn);
        if (unit) unit.failed = undefined;
      };
      return driver;
    },
  };
}

/**
 * SQLite has no boolean or date type. better-auth's kysely adapter declares
 * `supportsBooleans: false` and `supportsDates: false` for it, and @better-auth/core's adapter
 * factory then writes `value ? 1 : 0` and `date.toISOString()`. Our queries' parameters are
 * bound the same way here, once, so callers pass plain `true` and `new Date()` on either
 * database and store what better-auth reads. Only booleans and Dates change; better-auth's
 * parameters arrive already as numbers and strings and pass untouched, so nothing is encoded
 * twice (better-sqlite3 refuses to bind a boolean or a Date at all, so no query that ran
 * before changes). Done on the compiled query's flat parameter list rather than by a Kysely
 * plugin: a plugin rebuilds every query's operation tree (measured: compiling a typical
 * select took 12.5 µs instead of 6.7 µs), and would miss the precompiled queries
 * better-auth's adapter runs (`CompiledQuery.raw`).
 *
 * Results are left as stored: a SQLite row carries no column types (an ISO-looking string
 * may be text, a 0/1 may be a count), so decoding by guess would misread some column, and
 * better-auth decodes the same rows itself. Readers use `asBool` / `asDate` below, which
 * accept either driver's value.
 */
function sqliteParameters(query: CompiledQuery): CompiledQuery {
  if (!query.parameters.some((value) => typeof value === "boolean" || value instanceof Date)) return query;
  return { ...query, parameters: query.parameters.map(sqliteValue) };
}

function sqliteValue(value: unknown): unknown {
  if (typeof value === "boolean") return value ? 1 : 0;
  if (value instanceof Date) return value.toISOString();
  return value;
}

/** Reading back: either driver's representation to a Date / boolean. */
export function asDate(value: unknown): Date {
  return value instanceof Date ? value : new Date(String(value));
}
export function asBool(value: unknown): boolean {
  return value === true || value === 1 || value === "1" || value === "true";
}

/** How a store reads one column; `?` reads an absent or null value as null. */
export type Column = "text" | "text?" | "bool" | "date" | "date?" | "int" | "int?";

/** The column kind a field of type `V` needs (a field of another type does not compile). */
type ColumnFor<V> = [V] extends [boolean]
  ? "bool"
  : [V] extends [Date]
    ? "date"
    : [V] extends [Date | null]
      ? "date?"
      : [V] extends [number]
        ? "int"
        : [V] extends [number | null]
          ? "int?"
          : [V] extends [string]
            ? "text"
            : [V] extends [string | null]
              ? "text?"
              : never;

/**
 * A store's row type read from a database row: each listed column as its kind (booleans and
 * dates as SQLite stores them, bigints as PostgreSQL returns them), and nothing else, so a
 * column added to a table never rides along into an answer. The list must name every field of
 * `T` with the kind its type needs, or it does not compile.
 */
export function rowReader<T>(columns: { [K in keyof T]-?: ColumnFor<T[K]> }): (row: Record<string, any>) => T {
  const entries = Object.entries(columns) as [string, Column][];
  return (row) => {
    const out: Record<string, unknown> = {};
    for (const [name, kind] of entries) out[name] = readColumn(row[name], kind);
    return out as T;
  };
}

function readColumn(value: unknown, kind: Column): unknown {
  if (value == null) return kind.endsWith("?") ? null : value;
  if (kind === "bool") return asBool(value);
  if (kind === "date" || kind === "date?") return asDate(value);
  if (kind === "int" || kind === "int?") return Number(value);
  return value;
}
