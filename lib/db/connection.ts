import { AsyncLocalStorage } from "node:async_hooks";
import { CompiledQuery, Kysely } from "kysely";
import type pg from "pg";
import type { DatabaseTarget } from "../env.js";
import { lanePool, postgresDialect, rowShape, sqliteDialect, type DbOptions, type ChangeStamp, type ReadRowNow, type ReadRowsNow, type RowShape, type TransactNow, type TransactSoon } from "./dialects.js";
import { sqliteParameters } from "./sqlite-values.js";
import type { Database } from "./tables.js";
import { asKnownError, atomicallyOn, withConnectionRules, type Atomically, type Unit } from "./unit-of-work.js";

/** The one Kysely instance shared by better-auth and our own routes, with its dialect and unit of work. */
export interface DatabaseHandle {
  readonly db: Kysely<Database>;
  readonly type: "sqlite" | "postgres";
  /** PostgreSQL: the connection pool's counts, for the metrics (lib/metrics.ts watchPool). */
  readonly pool?: Pick<pg.Pool, "totalCount" | "idleCount" | "waitingCount">;
  /**
   * Runs `fn` as one transaction on one connection: every query of `fn` (and of whatever it
   * calls, better-auth's adapter included) uses it, nested transactions become savepoints.
   * Committed when `keep(result)` holds, rolled back when it does not or `fn` throws. A commit
   * that fails throws (a dropped database: `ServiceUnavailable`).
   */
  readonly atomically: Atomically;
  /**
   * SQLite only: the first row of a read (`?` parameters of strings and numbers), run on the
   * connection at once, synchronously: no Kysely pipeline, no queue behind the connection's
   * mutex, no promise. For the fast lanes' one-statement reads (plugins/oauth-store,
   * plugins/core-store), where Kysely's per-query work cost more than the query. It does not
   * wait for a transaction another request holds open across an await: it reads that
   * transaction's writes as they stand, never a row older than the last commit.
   */
  readonly readRowNow?: ReadRowNow;
  /** SQLite only: every row of such a read, as readRowNow reads one. */
  readonly readRowsNow?: ReadRowsNow;
  /**
   * SQLite only: a stamp of what the connection has seen of the database (./dialects.ts
   * ChangeStamp; null inside a transaction). A read made under a stamp gives the same row again
   * for as long as the stamp is unchanged, whoever writes to the file: a lane may then answer
   * from that row instead of reading it again (about a fifth of a two-table read's cost).
   */
  readonly changeStamp?: ChangeStamp;
  /**
   * SQLite only: a few writes as one transaction, run at once on the connection (`begin
   * immediate`, the statements, `commit`, with no await between them, so nothing else runs in
   * the transaction). For the fast lanes' short write transactions, which through Kysely and
   * `atomically` cost more than their statements. `undefined` when it cannot run now: the
   * connection is inside a transaction another request holds open across an await, or the
   * caller is inside a unit of work; the caller then takes `atomically`.
   */
  readonly transactNow?: TransactNow;
  /**
   * SQLite only: transactNow's work at the end of this turn of the event loop, in one
   * transaction with every other `fn` queued in the same turn (group commit: each page the
   * batch changes is written to the WAL once, not once per caller). `fn` only runs statements:
   * when one of the batch throws, the batch is rolled back and each `fn` runs again alone, so
   * only its own caller sees the error. `undefined` as transactNow's.
   */
  readonly transactSoon?: TransactSoon;
  /**
   * PostgreSQL only: one statement as a named prepared statement (`name` unique per text) of
   * the lanes' own pool (./dialects.ts lanePool), so the server parses and plans it once per
   * connection, generically, instead of on every run. For the fast lanes' one-statement reads
   * and writes, whose generic plans tests/ops/token-plans.test.ts checks; not in a unit of work.
   */
  readonly queryPrepared?: (name: string, sql: string, parameters: readonly unknown[]) => Promise<{ rows: Record<string, unknown>[]; rowCount: number }>;
  close(): Promise<void>;
}

export type Awaitable<T> = T | Promise<T>;

/** `f` of `value` at once when it is there, else once it is (a lane's step that may not wait). */
export function thenOrNow<T, U>(value: Awaitable<T>, f: (value: T) => Awaitable<U>): Awaitable<U> {
  return value instanceof Promise ? value.then(f) : f(value);
}

/**
 * The first row of `sql` (built once, `?`/`$n` parameters) as the fast lanes read it: at once
 * on SQLite, a prepared statement named `name` on PostgreSQL.
 */
export function preparedRowReader(database: Pick<DatabaseHandle, "db" | "readRowNow" | "queryPrepared">, name: string, sql: string): (parameters: readonly unknown[]) => Awaitable<Record<string, unknown> | undefined> {
  const { db, readRowNow, queryPrepared } = database;
  // SQLite answers at once: no promise (and no async-hooks work) for the lanes' reads.
  if (readRowNow) return (parameters: readonly unknown[]) => readRowNow(sql, parameters);
  if (queryPrepared) return async (parameters: readonly unknown[]) => (await queryPrepared(name, sql, parameters)).rows[0];
  return async (parameters: readonly unknown[]) => (await db.executeQuery<Record<string, unknown>>(CompiledQuery.raw(sql, [...parameters]))).rows[0];
}

/** Every row of `sql`, read as {@link preparedRowReader} reads the first. */
export function preparedRowsReader(database: Pick<DatabaseHandle, "db" | "readRowsNow" | "queryPrepared">, name: string, sql: string): (parameters: readonly unknown[]) => Awaitable<Record<string, unknown>[]> {
  const { db, readRowsNow, queryPrepared } = database;
  if (readRowsNow) return (parameters: readonly unknown[]) => readRowsNow(sql, parameters);
  if (queryPrepared) return async (parameters: readonly unknown[]) => (await queryPrepared(name, sql, parameters)).rows;
  return async (parameters: readonly unknown[]) => (await db.executeQuery<Record<string, unknown>>(CompiledQuery.raw(sql, [...parameters]))).rows;
}

export function createDb(target: DatabaseTarget, options: DbOptions = {}): DatabaseHandle {
  const units = new AsyncLocalStorage<Unit>();
  if (target.kind === "postgres") {
    const pool = postgresDialect(target.url, options.onPoolError ?? (() => {}));
    const lanes = lanePool(target.url, options.onPoolError ?? (() => {}));
    /** Each prepared statement's row shape, by its name (one text, so one set of columns). */
    const shapes = new Map<string, { names: string[]; shaped: RowShape }>();
    const shapeOf = (name: string, fields: readonly { name: string }[]): RowShape => {
      const known = shapes.get(name);
      if (known && known.names.length === fields.length && known.names.every((n, i) => n === fields[i]!.name)) return known.shaped;
      const names = fields.map((f) => f.name);
      const shaped = rowShape(names);
      shapes.set(name, { names, shaped });
      return shaped;
    };
    const db = new Kysely<Database>({ dialect: withConnectionRules(pool.dialect, units, { failedTransactionRefuses: true }) });
    return {
      db,
      type: "postgres",
      pool: pool.pool,
      atomically: atomicallyOn(units),
      queryPrepared: async (name, sql, parameters) => {
        try {
          // Rows as arrays, shaped by one literal per statement (dialects.ts rowShape): pg's own
          // rows are copies of a template built key by key, which V8 keeps in dictionary mode
          // past a dozen columns, and the lanes' statements have up to 40.
          const result = await lanes.query<unknown[]>({ name, text: sql, values: [...parameters], rowMode: "array" });
          const shaped = shapeOf(name, result.fields);
          return { rows: result.rows.map(shaped), rowCount: result.rowCount ?? 0 };
        } catch (err) {
          throw asKnownError(err);
        }
      },
      close: async () => {
        try {
          await db.destroy();
        } finally {
          await lanes.end();
        }
      },
    };
  }
  const sqlite = sqliteDialect(target.file, options);
  const db = new Kysely<Database>({ dialect: withConnectionRules(sqlite.dialect, units, { bind: sqliteParameters }) });
  return {
    db,
    type: "sqlite",
    atomically: atomicallyOn(units),
    readRowNow: (sql, parameters) => {
      try {
        return sqlite.readRowNow(sql, parameters);
      } catch (err) {
        throw asKnownError(err);
      }
    },
    readRowsNow: (sql, parameters) => {
      try {
        return sqlite.readRowsNow(sql, parameters);
      } catch (err) {
        throw asKnownError(err);
      }
    },
    changeStamp: () => {
      try {
        return sqlite.changeStamp();
      } catch (err) {
        throw asKnownError(err);
      }
    },
    transactNow: (fn) => {
      if (units.getStore()?.open) return undefined;
      try {
        return sqlite.transactNow(fn);
      } catch (err) {
        throw asKnownError(err);
      }
    },
    transactSoon: async (fn) => {
      if (units.getStore()?.open) return undefined;
      try {
        return await sqlite.transactSoon(fn);
      } catch (err) {
        throw asKnownError(err);
      }
    },
    close: async () => {
      await sqlite.checkpointer?.stop();
      await db.destroy();
    },
  };
}
