import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { sql, type Migration, type MigrationProvider, type QueryExecutorProvider } from "kysely";

/**
 * The committed schema: `schema/<dialect>/NNNN_name.sql`, written by `npm run db:generate`,
 * reviewed like code, applied in file-name order by `npm run db:migrate` (lib/migrate.ts).
 */
export const SCHEMA_DIR = fileURLToPath(new URL("../schema/", import.meta.url));

export type Dialect = "sqlite" | "postgres";

/** `0001_initial.sql`: four digits, then a lower-case name. Anything else in the folder is ignored. */
const FILE = /^(\d{4})_([a-z0-9_]+)\.sql$/;

export interface MigrationFile {
  /** File name without `.sql`: the name recorded in the migration table. */
  name: string;
  number: number;
  path: string;
}

export function listMigrationFiles(dir: string, dialect: Dialect): MigrationFile[] {
  let names: string[];
  try {
    names = readdirSync(join(dir, dialect));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw err;
  }
  return names
    .filter((n) => FILE.test(n))
    .sort()
    .map((n) => ({ name: n.slice(0, -4), number: Number(FILE.exec(n)![1]), path: join(dir, dialect, n) }));
}

/**
 * A file's statements. Generated files end each statement with `;` at the end of a line
 * (one DDL statement per line, as better-auth's planner compiles them); `--` lines are
 * comments. Hand-written migrations must keep that shape.
 */
export function statementsOf(text: string): string[] {
  const body = text
    .split(/\r?\n/)
    .filter((line) => !/^\s*--/.test(line))
    .join("\n");
  return body
    .split(/;[ \t]*(?:\n|$)/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** A migration runs before the tables it creates exist: raw statements on any executor. */
async function run(db: QueryExecutorProvider, statements: string[]) {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

/**
 * Kysely's Migrator reads our files through this. PostgreSQL runs each migration in a
 * transaction (Kysely does, DDL is transactional there); SQLite's DDL is transactional too,
 * but Kysely leaves it out, so the file's statements get one here: a failed file changes nothing.
 */
export function fileMigrationProvider(files: MigrationFile[], override: Record<string, Migration> = {}): MigrationProvider {
  return {
    async getMigrations() {
      const migrations: Record<string, Migration> = {};
      for (const file of files) {
        migrations[file.name] = override[file.name] ?? {
          async up(db) {
            const statements = statementsOf(readFileSync(file.path, "utf8"));
            if (db.isTransaction) await run(db, statements);
            else await db.transaction().execute((trx) => run(trx, statements));
          },
        };
      }
      return migrations;
    },
  };
}
