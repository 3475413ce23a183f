import type { CompiledQuery, Selectable } from "kysely";
import type { Decoded, StoredKind } from "./columns.js";
import { STORED_KINDS, type Database } from "./tables.js";

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
 * better-auth decodes the same rows itself. The generated types say which columns come back
 * in a stored form (lib/db/columns.ts); stores read rows through `rowReader` below, other
 * readers use `asBool` / `asDate`, which accept either driver's value.
 */
export function sqliteParameters(query: CompiledQuery): CompiledQuery {
  if (!query.parameters.some((value) => typeof value === "boolean" || value instanceof Date)) return query;
  return { ...query, parameters: query.parameters.map(sqliteValue) };
}

/** A parameter as SQLite stores it (booleans as 0/1, dates as ISO text). */
export function sqliteValue(value: unknown): unknown {
  if (typeof value === "boolean") return value ? 1 : 0;
  if (value instanceof Date) return value.toISOString();
  return value;
}

/** Reading back: either driver's representation to a Date / boolean. */
export function asDate(value: unknown): Date {
  return value instanceof Date ? value : new Date(String(value));
}
/** A JSON column's value: parsed by PostgreSQL (jsonb), its text from SQLite (parsed here; text that is not JSON throws). */
export function asJson(value: unknown): unknown {
  return typeof value === "string" ? JSON.parse(value) : (value ?? null);
}
export function asBool(value: unknown): boolean {
  return value === true || value === 1 || value === "1" || value === "true";
}

/**
 * A store's reader of one table's rows: the listed columns and nothing else (a column added
 * to the table never rides along into an answer), each as the schema types it, with what
 * SQLite stores in another form decoded (booleans, dates, JSON arrays: `STORED_KINDS` of the
 * generated lib/db/tables.ts), so a row reads the same on either database.
 */
export function rowReader<T extends keyof Database, C extends keyof Selectable<Database[T]> & string>(
  table: T,
  columns: readonly C[],
): (row: Pick<Selectable<Database[T]>, C>) => Decoded<Pick<Selectable<Database[T]>, C>> {
  const kinds: Partial<Record<string, StoredKind>> = STORED_KINDS[table];
  const entries = columns.map((name) => [name, kinds[name]] as const);
  return (row) => {
    const out: Record<string, unknown> = {};
    for (const [name, kind] of entries) out[name] = decode(row[name], kind);
    return out as Decoded<Pick<Selectable<Database[T]>, C>>;
  };
}

function decode(value: unknown, kind: StoredKind | undefined): unknown {
  if (value == null) return null;
  if (kind === "bool") return asBool(value);
  if (kind === "date") return asDate(value);
  if (kind === "json" && typeof value === "string") return JSON.parse(value);
  return value;
}
