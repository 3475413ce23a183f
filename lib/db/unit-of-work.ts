import type { AsyncLocalStorage } from "node:async_hooks";
import { CompiledQuery, type DatabaseConnection, type Dialect } from "kysely";
import { isUnavailable, isUniqueViolation, ServiceUnavailable, UniqueViolation } from "../errors.js";

/**
 * One `DatabaseHandle.atomically` call. Its reads run as usual until its first write, which takes a
 * connection and begins a transaction on it (`conn`); every later query in the same async
 * context uses that connection until `finish` ends it. Opening at the first write keeps the
 * connection (SQLite's only one) held for the shortest time, and never while the unit waits on
 * work that reads (another request's, say).
 */
export interface Unit {
  open: boolean;
  /** A statement of the unit failed (and was caught): PostgreSQL would answer its COMMIT with a rollback. */
  failed?: unknown;
  conn?: Promise<DatabaseConnection>;
  finish?: (commit: boolean) => Promise<void>;
}

/** `DatabaseHandle.atomically`. */
export type Atomically = <T>(fn: () => Promise<T>, keep?: (result: T) => boolean) => Promise<T>;

export function atomicallyOn(units: AsyncLocalStorage<Unit>): Atomically {
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
export function asKnownError(err: unknown): unknown {
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
export function withConnectionRules(
  dialect: Dialect,
  units: AsyncLocalStorage<Unit>,
  {
    bind = (query) => query,
    failedTransactionRefuses = false,
  }: {
    bind?: (query: CompiledQuery) => CompiledQuery;
    /** PostgreSQL: a transaction refuses every statement after one failed, until it ends. */
    failedTransactionRefuses?: boolean;
  } = {},
): Dialect {
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
      // Connections held by a unit (DatabaseHandle.atomically), each with its open savepoints.
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
      // After a statement of the unit failed, a PostgreSQL transaction refuses everything until
      // it ends (25P02, a 500): there a write meets the unit's own failure again, and a read (an
      // error path looking something up, say) runs on a connection of its own, outside the
      // transaction, which is rolled back whatever the read finds. (SQLite's transaction goes
      // on, and its only connection is the unit's.)
      const standIn = (unit: Unit): DatabaseConnection => ({
        async executeQuery(query) {
          // isRead (a pattern) only where the answer depends on it: not once the unit holds its connection.
          const refused = failedTransactionRefuses && unit.failed !== undefined;
          if (unit.open && refused && !isRead(query)) throw unit.failed;
          if (unit.open && !refused && (unit.conn || !isRead(query))) {
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
