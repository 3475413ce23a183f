import { mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { Worker } from "node:worker_threads";
import SQLite from "better-sqlite3";
import { PostgresDialect, SqliteDialect, type Dialect, type SqliteDatabase } from "kysely";
import pg from "pg";
import { keep } from "../kept.js";
import { sqliteValue } from "./sqlite-values.js";

/**
 * What differs between the two databases below Kysely: PostgreSQL's pool and its failure
 * rules, SQLite's file, pragmas, statement cache and checkpointer. The rules every query
 * follows on both (errors, units of work) are lib/db/unit-of-work.ts's.
 */

export interface DbOptions {
  /** A pg pool lost an idle client (logged; the pool replaces it). */
  onPoolError?: (err: Error) => void;
  /**
   * SQLite: copy the write-ahead log back into the database file from a worker thread
   * (the server), instead of inside whichever request's commit crosses the threshold.
   */
  backgroundCheckpoint?: boolean;
}

export function postgresDialect(url: string, onPoolError: (err: Error) => void): { dialect: Dialect; pool: pg.Pool } {
  const pool = handledPool({ connectionString: url, max: 10 }, onPoolError);
  pool.on("connect", preparesStatements);
  return { dialect: new PostgresDialect({ pool }), pool };
}

/**
 * A pg pool with this server's failure rules. A connection attempt that gets no answer gives
 * up after 5 s (a request fails with a 503, lib/errors.ts ServiceUnavailable) instead of
 * waiting for ever; idle clients are let go after 30 s, so fewer of them are left to find dead
 * after a database restart. A connection dropped by the server (restart, failover, admin) must
 * not crash the process. Idle in the pool, its error reaches the pool's listener and the pool
 * replaces it. Checked out between two queries (in a transaction, say), its error goes to the
 * client itself, which pg throws as an unhandled 'error' event without a listener: the next
 * query on it fails (a 503) and the pool drops it on release.
 */
function handledPool(config: pg.PoolConfig, onPoolError: (err: Error) => void): pg.Pool {
  const pool = new pg.Pool({ connectionTimeoutMillis: 5000, idleTimeoutMillis: 30_000, ...config });
  pool.on("error", onPoolError);
  pool.on("connect", (client) => client.on("error", onPoolError));
  return pool;
}

/**
 * The pool of the fast lanes' own statements (DatabaseHandle.queryPrepared: the token reads,
 * the refresh grant's rotation, the profile read, most of them gathered for several requests
 * over `unnest` of arrays). Its connections plan each statement once, generically
 * (`plan_cache_mode = force_generic_plan`): PostgreSQL's own choice kept making a custom plan
 * at every run, a batch's array lengths making it look cheaper, and planning was a sixth of
 * the server's work in the PostgreSQL refresh bench. The generic plans of these statements are
 * checked to use their indexes on tables without statistics (tests/ops/token-plans.test.ts);
 * the app's statements keep PostgreSQL's choice, on their own pool. Errors are handled as the
 * app's pool handles them (handledPool).
 */
export function lanePool(url: string, onPoolError: (err: Error) => void): pg.Pool {
  // The setting rides in the connection's start-up packet (`options`), so it holds before the
  // first statement without a statement of its own (PostgreSQL 12 or later knows it). An
  // operator's PGOPTIONS, which `options` would replace, is kept in front of it.
  const options = [process.env.PGOPTIONS, "-c plan_cache_mode=force_generic_plan"].filter(Boolean).join(" ");
  return handledPool({ connectionString: url, max: 5, options }, onPoolError);
}

/** Most statement texts one connection keeps prepared (each holds a plan in its server process). */
const MAX_PREPARED_PER_CONNECTION = 500;
const PREPARABLE = /^\s*(select|insert|update|delete|with)\b/i;

/**
 * Kysely sends each query as an unnamed statement (`client.query(text, values)`), which the
 * server parses and plans on every run. The texts better-auth and our stores send are a small,
 * fixed set (parameters are bound, never spliced in), so each connection names the texts it
 * meets (`p0`, `p1`, ...) and pg parses each once per connection, then only binds and
 * executes it. A text past the cap, a statement with no parameters list, and anything but a
 * plain read or write (transaction control, DDL) stay unnamed.
 */
function preparesStatements(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  const names = new Map<string, string>();
  (client as { query: unknown }).query = (config: unknown, values?: unknown, callback?: unknown) => {
    if (typeof config === "string" && Array.isArray(values) && callback === undefined) {
      let name = names.get(config);
      if (name === undefined && names.size < MAX_PREPARED_PER_CONNECTION && PREPARABLE.test(config)) names.set(config, (name = `p${names.size}`));
      if (name !== undefined) return query({ name, text: config, values });
    }
    return callback === undefined ? (values === undefined ? query(config) : query(config, values)) : query(config, values, callback);
  };
}

/** One row of a read, run at once on SQLite's connection (DatabaseHandle.readRowNow). */
export type ReadRowNow = (sql: string, parameters: readonly unknown[]) => Record<string, unknown> | undefined;
/** Every row of a read, run at once on SQLite's connection (DatabaseHandle.readRowsNow). */
export type ReadRowsNow = (sql: string, parameters: readonly unknown[]) => Record<string, unknown>[];

/**
 * What SQLite's connection has seen of the database (DatabaseHandle.changeStamp): two equal
 * stamps mean that no connection committed a change in between (`PRAGMA data_version`, which
 * moves on every other connection's commit, another process's included) and that this one made
 * none (`total_changes()`, every row its statements inserted, updated or deleted, rolled back
 * or not). null while the connection is inside a transaction: what it reads then may be rolled
 * back without either figure moving back.
 */
export type ChangeStamp = () => { version: number; changes: number } | null;

/**
 * Statements run at once, in one transaction of SQLite's connection (DatabaseHandle.transactNow):
 * `fn` gets `run(sql, parameters)`, which answers the rows changed. `undefined` when the
 * connection is inside another transaction (one held open across an await).
 */
export type TransactNow = <T>(fn: (run: (sql: string, parameters: readonly unknown[]) => number) => T) => { value: T } | undefined;

/**
 * transactNow's work, gathered (group commit): every `fn` queued in one turn of the event loop
 * runs, in order, in one transaction at the end of that turn (DatabaseHandle.transactSoon).
 */
export type TransactSoon = <T>(fn: (run: (sql: string, parameters: readonly unknown[]) => number) => T) => Promise<{ value: T } | undefined>;

export function sqliteDialect(file: string, options: DbOptions): { dialect: Dialect; readRowNow: ReadRowNow; readRowsNow: ReadRowsNow; changeStamp: ChangeStamp; transactNow: TransactNow; transactSoon: TransactSoon; checkpointer?: { stop(): Promise<void> } } {
  if (file !== ":memory:") mkdirSync(dirname(file), { recursive: true });
  const sqlite = new SQLite(file);
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
  const checkpointer = options.backgroundCheckpoint && file !== ":memory:" ? startCheckpointer(file) : undefined;
  const database = withStatementCache(sqlite);
  const { readRowNow, readRowsNow } = rowReadersOf(sqlite);
  const dataVersion = sqlite.prepare("pragma data_version").pluck(true);
  const totalChanges = sqlite.prepare("select total_changes()").pluck(true);
  const changeStamp: ChangeStamp = () => (sqlite.inTransaction ? null : { version: dataVersion.get() as number, changes: totalChanges.get() as number });
  const run = (sql: string, parameters: readonly unknown[]) => (database.prepare(sql) as unknown as SQLite.Statement).run(...parameters.map(sqliteValue)).changes;
  const begin = sqlite.prepare("begin immediate");
  const commit = sqlite.prepare("commit");
  const rollback = sqlite.prepare("rollback");
  const transactNow: TransactNow = (fn) => {
    if (sqlite.inTransaction) return undefined;
    begin.run();
    let value;
    try {
      value = fn(run);
      commit.run();
    } catch (err) {
      if (sqlite.inTransaction) rollback.run();
      throw err;
    }
    return { value };
  };
  type Queued = { fn: Parameters<TransactNow>[0]; ok: (result: { value: unknown } | undefined) => void; fail: (err: unknown) => void };
  let queue: Queued[] | null = null;
  const flush = () => {
    const batch = queue!;
    queue = null;
    // Alone, or while another transaction holds the connection: each as transactNow runs it.
    if (batch.length > 1 && !sqlite.inTransaction) {
      try {
        begin.run();
        const values = batch.map(({ fn }) => fn(run));
        commit.run();
        for (let i = 0; i < batch.length; i++) batch[i]!.ok({ value: values[i] });
        return;
      } catch {
        // One failed (or the commit did): nothing of the batch stays, and each runs again
        // alone, so only a failing one fails.
        if (sqlite.inTransaction) rollback.run();
      }
    }
    for (const { fn, ok, fail } of batch) {
      try {
        ok(transactNow(fn));
      } catch (err) {
        fail(err);
      }
    }
  };
  const transactSoon: TransactSoon = (fn) =>
    new Promise((ok, fail) => {
      if (!queue) {
        queue = [];
        setImmediate(flush);
      }
      queue.push({ fn, ok: ok as Queued["ok"], fail });
    });
  return { dialect: new SqliteDialect({ database }), readRowNow, readRowsNow, changeStamp, transactNow, transactSoon, checkpointer };
}

export type RowShape = (values: readonly unknown[]) => Record<string, unknown>;

/**
 * The row of `values` under `names`, as one object literal compiled once per statement. Built
 * key by key instead, a row of the lanes' width (26-40 columns) became a dictionary-mode object
 * in V8: 1.3 µs to build a 40-column row, and a hash lookup for every later read of a field;
 * the literal takes 0.05 µs and has one fixed hidden class (a loop of a million rows, Node 20).
 * The names are the statement's own column names (our SQL's aliases), never request data, and
 * each is written as a JSON string literal. A `__proto__` column would set the literal's
 * prototype, so such a statement keeps the key-by-key row.
 */
export function rowShape(names: readonly string[]): RowShape {
  if (names.includes("__proto__")) {
    return (values) => {
      const row: Record<string, unknown> = {};
      for (let i = 0; i < names.length; i++) Object.defineProperty(row, names[i]!, { value: values[i], enumerable: true, writable: true, configurable: true });
      return row;
    };
  }
  return new Function("v", `return {${names.map((name, i) => `${JSON.stringify(name)}: v[${i}]`).join(", ")}};`) as RowShape;
}

/**
 * readRowNow / readRowsNow: each text prepared once in raw mode (the driver answers an array,
 * not an object whose every key it builds anew from the column's C string), its rows then shaped
 * in JS under the column names read once (`rowShape`): about a third less per read than `get`'s object.
 */
function rowReadersOf(sqlite: SQLite.Database): { readRowNow: ReadRowNow; readRowsNow: ReadRowsNow } {
  const prepared = new Map<string, { statement: SQLite.Statement; shaped: RowShape }>();
  const entryOf = (sql: string) => {
    let entry = prepared.get(sql);
    if (!entry) {
      const statement = sqlite.prepare(sql).raw(true);
      entry = { statement, shaped: rowShape(statement.columns().map((c) => c.name)) };
      prepared.set(sql, entry);
    }
    return entry;
  };
  return {
    readRowNow(sql, parameters) {
      const { statement, shaped } = entryOf(sql);
      const values = statement.get(...parameters) as unknown[] | undefined;
      return values ? shaped(values) : undefined;
    },
    readRowsNow(sql, parameters) {
      const { statement, shaped } = entryOf(sql);
      return (statement.all(...parameters) as unknown[][]).map(shaped);
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
      keep(statements, sql, statement, max);
      return statement;
    },
  };
}
