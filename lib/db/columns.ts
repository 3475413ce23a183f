import type { ColumnType } from "kysely";

/**
 * The value kinds of lib/db/tables.ts (generated from schema/): what a query reads from a
 * column on either dialect, and what it writes. PostgreSQL returns booleans, Dates and parsed
 * JSON; SQLite stores them as better-auth does (0/1, ISO-8601 text, JSON text) and returns
 * them as stored. Writes take the logical value on both: booleans and Dates are encoded for
 * SQLite where a query reaches the driver (lib/db/sqlite.ts), JSON is written as its text.
 * `rowReader` (lib/db/sqlite.ts) decodes the stored forms back.
 */

declare const stored: unique symbol;

/** A boolean as SQLite stores it. */
export type StoredBool = 0 | 1;
/** A date as SQLite stores it: ISO-8601 UTC text. */
export type StoredDate = string & { readonly [stored]: "date" };
/** JSON as SQLite stores it: its text (PostgreSQL's jsonb comes back parsed). */
export type StoredJson = string & { readonly [stored]: "json" };

export type Bool = ColumnType<boolean | StoredBool, boolean, boolean>;
export type Timestamp = ColumnType<Date | StoredDate, Date, Date>;
/** A JSON column holding a `T` (better-auth's `string[]` fields: scopes, resources, ...): written as `JSON.stringify`'s text. */
export type Json<T> = ColumnType<T | StoredJson, string, string>;

/** A column that may hold NULL: read as null, and may be left out of an insert. */
export type Nullable<C> =
  C extends ColumnType<infer S, infer I, infer U> ? ColumnType<S | null, I | null | undefined, U | null> : C | null;

/** A selected row with SQLite's stored forms decoded (what `rowReader` returns). */
export type Decoded<R> = { [K in keyof R]: Exclude<R[K], StoredBool | StoredDate | StoredJson> };

/** How SQLite stores a column that needs decoding; other columns read as they are. */
export type StoredKind = "bool" | "date" | "json";
