import { execFile } from "node:child_process";
import { cpSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { createDb, type DatabaseHandle } from "../../lib/db/connection.js";
import { applyMigrations, baselineLegacyDatabase, MIGRATION_TABLE, pendingMigrations, planMigrations } from "../../lib/migrate.js";
import { listMigrationFiles, SCHEMA_DIR, statementsOf, type Dialect } from "../../lib/schema-files.js";
import { codeSchemaOptions, schemaDrift, withScratch, withScratchPostgres } from "../../schema/generate.js";
import { startTestServer } from "../helpers/server.js";
import { useTempDirs } from "../helpers/fixtures.js";

const pgUrl = process.env.TEST_DATABASE_URL;
const dialect: Dialect = pgUrl ? "postgres" : "sqlite";
const run = promisify(execFile);
const tsx = join(process.cwd(), "node_modules/.bin/tsx");
/** Temporary directories, removed after the file's tests. */
const tempDir = useTempDirs("idp-schema-");

/** A fresh, empty database of the dialect under test, and the DATABASE_URL for a server to open it too. */
async function withFresh<T>(use: (db: DatabaseHandle, url: string) => Promise<T>): Promise<T> {
  if (pgUrl) return withScratchPostgres(pgUrl, async (db) => use(db, await urlOf(db)));
  const file = join(tempDir(), "fresh.sqlite");
  const db = createDb({ kind: "sqlite", file });
  try {
    return await use(db, file);
  } finally {
    await db.close();
  }
}

/**
 * A database the code-driven migration made before schema/ existed: better-auth's planner ran
 * the very statements it then wrote as the first file, and recorded nothing.
 */
async function makeLegacy(db: DatabaseHandle) {
  await runFile(db, listMigrationFiles(SCHEMA_DIR, db.type)[0]!.path);
}

/** A migration file's statements, run without any record. */
async function runFile(db: DatabaseHandle, path: string) {
  for (const statement of statementsOf(readFileSync(path, "utf8"))) await sql.raw(statement).execute(db.db);
}

/** Kysely's Migrator's own table, beside the schema's. */
const migrationsTable = (db: DatabaseHandle) => db.db.withTables<{ [MIGRATION_TABLE]: { name: string } }>();
const tableNames = async (db: DatabaseHandle) => (await db.db.introspection.getTables()).map((t) => t.name);

describe("schema/ and the code agree", () => {
  it.each<Dialect>(pgUrl ? ["sqlite", "postgres"] : ["sqlite"])("schema/%s replayed on a fresh database leaves better-auth's planner nothing to do", async (d) => {
    const pending = await withScratch(d, pgUrl, async (db) => (await schemaDrift(db)).pending);
    expect(pending, "run `npm run db:generate` and commit schema/").toEqual([]);
  });

  it("a field added in code without a migration is reported as drift", async () => {
    const pending = await withFresh(async (db) => {
      await applyMigrations(db);
      const options = codeSchemaOptions(db);
      const probe = { id: "schema-probe", schema: { user: { fields: { schemaProbe: { type: "string" as const, required: false } } } } };
      return (await planMigrations({ ...options, plugins: [...(options.plugins ?? []), probe] })).pending;
    });
    expect(pending).toContain("user.schemaProbe");
  });
});

describe("applying schema/", () => {
  it("applies every file in order, records each, and does nothing the second time", async () => {
    await withFresh(async (db) => {
      const files = readdirSync(join(SCHEMA_DIR, dialect)).filter((f) => f.endsWith(".sql")).map((f) => f.slice(0, -4)).sort();
      expect(await pendingMigrations(db)).toEqual(files);
      expect(await applyMigrations(db)).toEqual(files);
      expect(await applyMigrations(db)).toEqual([]);
      expect(await pendingMigrations(db)).toEqual([]);
      const recorded = await migrationsTable(db).selectFrom(MIGRATION_TABLE).select("name").orderBy("name").execute();
      expect(recorded.map((r) => r.name)).toEqual(files);
    });
  });

  it("a failing file changes nothing and is not recorded", async () => {
    const dir = tempDir();
    cpSync(SCHEMA_DIR, dir, { recursive: true });
    writeFileSync(join(dir, dialect, "9998_half.sql"), `create table "halfDone" ("id" text primary key);\nthis is not sql;\n`);
    await withFresh(async (db) => {
      await expect(applyMigrations(db, dir)).rejects.toThrow(/9998_half failed/);
      expect(await tableNames(db)).not.toContain("halfDone");
      // PostgreSQL rolls back the whole run (Kysely: one transaction), SQLite just that file.
      expect((await pendingMigrations(db, dir)).at(-1)).toBe("9998_half");
    });
  });
});

describe("a database made before schema/ (code-driven migration)", () => {
  it("is baselined: the first migration is recorded without running, later ones apply on top", async () => {
    const dir = tempDir();
    cpSync(SCHEMA_DIR, dir, { recursive: true });
    const later = "9999_probe";
    const alter = `alter table "user" add column "schemaProbe" text;\n`;
    writeFileSync(join(dir, "sqlite", `${later}.sql`), alter);
    writeFileSync(join(dir, "postgres", `${later}.sql`), alter);
    await withFresh(async (db) => {
      await makeLegacy(db);
      expect(await tableNames(db)).not.toContain(MIGRATION_TABLE);
      expect(await baselineLegacyDatabase(db, dir)).toContain("0001_initial");
      expect(await baselineLegacyDatabase(db, dir)).toEqual([]);
      const pending = await pendingMigrations(db, dir);
      expect(pending).not.toContain("0001_initial");
      expect(pending.at(-1)).toBe(later);
      expect(await applyMigrations(db, dir)).toEqual(pending);
      const user = (await db.db.introspection.getTables()).find((t) => t.name === "user");
      expect(user?.columns.map((c) => c.name)).toContain("schemaProbe");
    });
  });

  it("one made by code that already had a later migration's fields is baselined up to that migration", async () => {
    const dir = tempDir();
    cpSync(SCHEMA_DIR, dir, { recursive: true });
    const alter = `alter table "user" add column "schemaProbe" text;\n`;
    for (const d of ["sqlite", "postgres"]) writeFileSync(join(dir, d, "9999_probe.sql"), alter);
    await withFresh(async (db) => {
      await makeLegacy(db);
      for (const f of listMigrationFiles(SCHEMA_DIR, db.type).slice(1)) await runFile(db, f.path);
      await sql.raw(alter).execute(db.db);
      const all = listMigrationFiles(dir, db.type).map((f) => f.name);
      expect(await baselineLegacyDatabase(db, dir)).toEqual(all);
      expect(await pendingMigrations(db, dir)).toEqual([]);
    });
  });

  it("a later migration that only adds an index the database lacks is not taken as applied", async () => {
    const dir = tempDir();
    cpSync(SCHEMA_DIR, dir, { recursive: true });
    for (const d of ["sqlite", "postgres"]) writeFileSync(join(dir, d, "9999_index.sql"), `create index "user_name_probe_idx" on "user" ("name");\n`);
    await withFresh(async (db) => {
      const current = listMigrationFiles(SCHEMA_DIR, db.type);
      for (const f of current) await runFile(db, f.path);
      expect(await baselineLegacyDatabase(db, dir)).toEqual(current.map((f) => f.name));
      expect(await pendingMigrations(db, dir)).toEqual(["9999_index"]);
      expect(await applyMigrations(db, dir)).toEqual(["9999_index"]);
    });
  });

  it("one lacking part of the first migration is refused, naming what is missing", async () => {
    await withFresh(async (db) => {
      await makeLegacy(db);
      await sql`drop table "approvalRequest"`.execute(db.db);
      await expect(baselineLegacyDatabase(db)).rejects.toThrow(/predates schema\/ migrations.*approvalRequest.*db:migrate/s);
      expect(await tableNames(db)).not.toContain(MIGRATION_TABLE);
    });
  });

  it("the server records the baseline at start-up even without AUTO_MIGRATE, and counts only later files as pending", async () => {
    const later = listMigrationFiles(SCHEMA_DIR, dialect).slice(1).map((f) => f.name);
    await withFresh(async (db, url) => {
      await makeLegacy(db);
      const env = { DATABASE_URL: url, AUTO_MIGRATE: "false" };
      // SQLite always migrates at start-up; PostgreSQL refuses while a later file is pending.
      if (dialect === "postgres" && later.length) await expect(startTestServer(env)).rejects.toThrow(`schema is behind (${later.length}: ${later[0]}`);
      else await (await startTestServer(env)).close();
      const recorded = await migrationsTable(db).selectFrom(MIGRATION_TABLE).select("name").execute();
      expect(recorded.map((r) => r.name)).toContain("0001_initial");
      const server = await startTestServer({ ...env, AUTO_MIGRATE: "true" });
      try {
        expect((await server.api("/.well-known/openid-configuration")).status).toBe(200);
        expect(await pendingMigrations(db)).toEqual([]);
      } finally {
        await server.close();
      }
    });
  });
});

/** The DATABASE_URL of a scratch PostgreSQL database. */
async function urlOf(db: DatabaseHandle): Promise<string> {
  const { rows } = await sql<{ name: string }>`select current_database() as name`.execute(db.db);
  const url = new URL(pgUrl!);
  url.pathname = `/${rows[0]!.name}`;
  return url.toString();
}

describe("npm run db:generate", () => {
  it("writes a numbered migration per dialect into an empty schema folder, and nothing when up to date", async () => {
    const dir = tempDir();
    const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dir, DATABASE_URL: join(dir, "unused.sqlite"), LOG_LEVEL: "error" };
    const dialects = pgUrl ? ["--postgres-url", pgUrl] : ["--dialect", "sqlite"];
    const first = await run(tsx, ["scripts/db-generate.ts", "--dir", dir, ...dialects], { env });
    expect(first.stdout).toMatch(/sqlite: wrote .*0001_initial\.sql/);
    for (const d of pgUrl ? ["sqlite", "postgres"] : ["sqlite"]) expect(readdirSync(join(dir, d))).toEqual(["0001_initial.sql"]);
    const again = await run(tsx, ["scripts/db-generate.ts", "--dir", dir, ...dialects], { env });
    expect(again.stdout).toBe("");
    expect(again.stderr).toMatch(/sqlite: schema is up to date, nothing written/);
    expect(readdirSync(join(dir, "sqlite"))).toEqual(["0001_initial.sql"]);
  });

  it("refuses to write only one dialect unless told: the postgres one needs a server", async () => {
    const dir = tempDir();
    const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dir, DATABASE_URL: join(dir, "unused.sqlite"), LOG_LEVEL: "error" };
    const failed = await run(tsx, ["scripts/db-generate.ts", "--dir", dir], { env }).catch((err) => err);
    expect(failed.code).toBe(2);
    expect(failed.stderr).toMatch(/--postgres-url/);
    expect(() => readdirSync(join(dir, "sqlite"))).toThrow();
  });
});
