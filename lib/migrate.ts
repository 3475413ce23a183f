import { readFileSync } from "node:fs";
import SQLite from "better-sqlite3";
import type { BetterAuthOptions } from "better-auth";
import { getMigrations } from "better-auth/db/migration";
import { Migrator, sql, type Kysely, type MigrationResultSet } from "kysely";
import type { DatabaseHandle } from "./db/connection.js";
import { ConfigError } from "./env.js";
import { fileMigrationProvider, listMigrationFiles, SCHEMA_DIR, statementsOf, type MigrationFile } from "./schema-files.js";
import type { Database } from "./db/tables.js";

/** Where Kysely's Migrator records the applied files of schema/<dialect>/. */
export const MIGRATION_TABLE = "schema_migration";
const MIGRATION_LOCK_TABLE = "schema_migration_lock";

export interface MigrationPlan {
  /** Tables and columns still to create, as `table` or `table.column`. */
  pending: string[];
  /** SQL that brings the database up to date (empty when nothing is pending). */
  sql(): Promise<string>;
  apply(): Promise<void>;
}

/**
 * The code's schema (better-auth's tables plus our plugins' fields) against a live database:
 * what `npm run db:generate` writes into schema/, and, after the files are applied, the
 * check that they and the code agree. Running it twice is a no-op.
 */
export async function planMigrations(options: BetterAuthOptions): Promise<MigrationPlan> {
  const { toBeCreated, toBeAdded, toBeAddedIndexes, compileMigrations, runMigrations } = await getMigrations(withoutArrayEncodingNotes(options));
  const pending = [
    ...toBeCreated.map((t) => t.table),
    ...toBeAdded.flatMap((t) => Object.keys(t.fields).map((f) => `${t.table}.${f}`)),
    ...toBeAddedIndexes.map((i) => `index ${i.name}`),
  ];
  return {
    pending,
    sql: () => (pending.length ? compileMigrations() : Promise.resolve("")),
    apply: () => (pending.length ? runMigrations() : Promise.resolve()),
  };
}

/**
 * better-auth's planner warns once per array field (`scopes`, `resources`, ...) that the column
 * is TEXT where it expected string[]: on SQLite that is the encoding (a JSON array in a text
 * column, as better-auth's Kysely adapter stores arrays there), not drift an operator must act
 * on, so only those notes are dropped; every other warning passes.
 */
const ARRAY_AS_TEXT = /^Field \w+ in table \w+ has a different type in the database\. Expected (?:string|number)\[\] but got text\.$/i;

function withoutArrayEncodingNotes(options: BetterAuthOptions): BetterAuthOptions {
  const log = options.logger?.log;
  if (!log) return options;
  return {
    ...options,
    logger: {
      ...options.logger,
      log: (level, message, ...args) => {
        if (level === "warn" && ARRAY_AS_TEXT.test(message)) return;
        log(level, message, ...args);
      },
    },
  };
}

function migrator(db: Kysely<Database>, files: MigrationFile[], override = {}) {
  return new Migrator({
    db,
    provider: fileMigrationProvider(files, override),
    migrationTableName: MIGRATION_TABLE,
    migrationLockTableName: MIGRATION_LOCK_TABLE,
  });
}

/** The schema/ files of this database's dialect not yet recorded as applied, in order. */
export async function pendingMigrations(database: DatabaseHandle, dir = SCHEMA_DIR): Promise<string[]> {
  const files = listMigrationFiles(dir, database.type);
  const info = await migrator(database.db, files).getMigrations();
  return info.filter((m) => !m.executedAt).map((m) => m.name);
}

/**
 * Applies the pending schema/ files in order and records each (Kysely's Migrator: a lock
 * table serialises instances starting together on PostgreSQL). Idempotent.
 */
export async function applyMigrations(database: DatabaseHandle, dir = SCHEMA_DIR): Promise<string[]> {
  const files = listMigrationFiles(dir, database.type);
  return namesOf(await migrator(database.db, files).migrateToLatest());
}

function namesOf({ error, results }: MigrationResultSet): string[] {
  if (error) {
    const failed = results?.find((r) => r.status === "Error")?.migrationName;
    throw new Error(`schema migration ${failed ?? ""} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  return (results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName);
}

/** Tables and their columns, by name; a named index as `index <name>` with no columns. */
type Shape = Map<string, Set<string>>;

async function shapeOf(database: DatabaseHandle): Promise<Shape> {
  const tables = await database.db.introspection.getTables();
  const indexes =
    database.type === "sqlite"
      ? await sql<{ name: string }>`select name from sqlite_master where type = 'index'`.execute(database.db)
      : await sql<{ name: string }>`select indexname as name from pg_indexes where schemaname = current_schema()`.execute(database.db);
  return new Map([
    ...tables.map((t): [string, Set<string>] => [t.name, new Set(t.columns.map((c) => c.name))]),
    ...indexes.rows.map((i): [string, Set<string>] => [`index ${i.name}`, new Set()]),
  ]);
}

/**
 * The tables, columns and named indexes each prefix of the migrations creates (files 1..k).
 * Names are the same in both dialects (one better-auth schema), so the SQLite files are
 * replayed into an in-memory SQLite whatever the target: no scratch PostgreSQL at start-up.
 */
function* prefixShapes(files: MigrationFile[], dir: string): Generator<[MigrationFile, Shape]> {
  const twins = new Map(listMigrationFiles(dir, "sqlite").map((f) => [f.name, f]));
  const memory = new SQLite(":memory:");
  const objects = memory.prepare("select type, name from sqlite_master where type in ('table', 'index') and name not like 'sqlite_%'");
  const columns = memory.prepare("select name from pragma_table_info(?)").pluck();
  try {
    for (const file of files) {
      const twin = twins.get(file.name);
      if (!twin) throw new ConfigError(`schema/sqlite/${file.name}.sql is missing: run \`npm run db:generate\``);
      for (const statement of statementsOf(readFileSync(twin.path, "utf8"))) memory.exec(statement);
      const shape = (objects.all() as { type: string; name: string }[]).map(({ type, name }): [string, Set<string>] =>
        type === "index" ? [`index ${name}`, new Set()] : [name, new Set(columns.all(name) as string[])],
      );
      yield [file, new Map(shape)];
    }
  } finally {
    memory.close();
  }
}

/** `table`, `table.column` or `index name` of `wanted` that `live` lacks. */
function missingFrom(live: Shape, wanted: Shape): string[] {
  return [...wanted].flatMap(([table, columns]) => {
    const have = live.get(table);
    return have ? [...columns].filter((c) => !have.has(c)).map((c) => `${table}.${c}`) : [table];
  });
}

/**
 * A database made before schema/ existed (better-auth's planner migrated it from the code
 * directly) has the tables but no record of migrations. The longest run of migrations from
 * the first whose every table, column and named index it already holds is recorded as applied without
 * running (a baseline: their CREATE TABLEs would fail); later ones apply as usual. Generated
 * migrations only ever add tables, columns and indexes, so "holds everything up to k" means
 * "is at k". This writes only the record, so it is done at start-up whatever AUTO_MIGRATE
 * says. A database lacking part of the first migration is refused: nobody should guess how
 * it got that way. Returns the names baselined (none for a new or already recorded database).
 */
export async function baselineLegacyDatabase(database: DatabaseHandle, dir = SCHEMA_DIR): Promise<string[]> {
  const live = await shapeOf(database);
  if (live.has(MIGRATION_TABLE) || !live.has("user")) return [];
  const held: MigrationFile[] = [];
  for (const [file, shape] of prefixShapes(listMigrationFiles(dir, database.type), dir)) {
    const missing = missingFrom(live, shape);
    if (!missing.length) {
      held.push(file);
      continue;
    }
    if (held.length) break;
    throw new ConfigError(
      `The database predates schema/ migrations and lacks part of ${database.type}/${file.name}.sql ` +
        `(${missing.slice(0, 5).join(", ")}${missing.length > 5 ? ", ..." : ""}). Bring it up to date with the previous release's \`npm run db:migrate\` first.`,
    );
  }
  if (!held.length) return [];
  const noop = Object.fromEntries(held.map((f) => [f.name, { up: async () => {} }]));
  return namesOf(await migrator(database.db, held, noop).migrateTo(held.at(-1)!.name));
}
