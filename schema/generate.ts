import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { authOptions } from "../auth.config.js";
import { createCollaborators } from "../collaborators.js";
import { createDb, type DatabaseHandle } from "../lib/db/connection.js";
import { loadEnv } from "../lib/env.js";
import { createLogger } from "../lib/logger.js";
import { applyMigrations, planMigrations } from "../lib/migrate.js";
import { listMigrationFiles, SCHEMA_DIR, type Dialect } from "../lib/schema-files.js";

/**
 * The code's schema as better-auth options, with every setting at its default so that
 * schema/ does not depend on who generated it (the start-up check in server.ts compares
 * the configured server's own options, should a setting ever add a field).
 */
export function codeSchemaOptions(database: DatabaseHandle) {
  const config = loadEnv({ BETTER_AUTH_SECRET: "schema-".repeat(6), LOG_LEVEL: "silent", DATABASE_URL: ":memory:", NODE_ENV: "development" });
  const logger = createLogger("silent");
  return authOptions({ config, database, logger, shared: createCollaborators({ config, logger }) });
}

/** What the code's schema still needs on top of schema/<dialect>/* (applied to `scratch`). */
export async function schemaDrift(scratch: DatabaseHandle, dir = SCHEMA_DIR) {
  await applyMigrations(scratch, dir);
  return planMigrations(codeSchemaOptions(scratch));
}

/** The number the next migration gets: one past the highest in either dialect, so both stay in step. */
export function nextMigrationNumber(dir = SCHEMA_DIR): number {
  const numbers = (["sqlite", "postgres"] as const).flatMap((d) => listMigrationFiles(dir, d).map((f) => f.number));
  return Math.max(0, ...numbers) + 1;
}

/** `user.pubkey`, `index x` ... -> `user_pubkey_and_more`: a readable default name. */
export function migrationName(pending: string[], number: number): string {
  if (number === 1) return "initial";
  const words = pending[0]!.replace(/^index /, "").replace(/[^A-Za-z0-9]+/g, "_").toLowerCase();
  return `${words.slice(0, 40)}${pending.length > 1 ? "_and_more" : ""}`;
}

/**
 * Writes schema/<dialect>/NNNN_name.sql with the SQL that brings the earlier files' schema
 * to the code's, or nothing (null) when they already agree.
 */
export async function generateMigration(scratch: DatabaseHandle, options: { dir?: string; number: number; name?: string }) {
  const dir = options.dir ?? SCHEMA_DIR;
  const plan = await schemaDrift(scratch, dir);
  if (!plan.pending.length) return null;
  const name = `${String(options.number).padStart(4, "0")}_${options.name ?? migrationName(plan.pending, options.number)}`;
  const file = join(dir, scratch.type, `${name}.sql`);
  const header = [
    `-- ${name} (${scratch.type}): written by \`npm run db:generate\` from the code's schema. Review and commit it;`,
    `-- never edit a migration that has been applied anywhere: add a new one. One statement per line, ending in ";".`,
    `-- Changes: ${plan.pending.join(", ")}`,
  ];
  mkdirSync(join(dir, scratch.type), { recursive: true });
  writeFileSync(file, `${header.join("\n")}\n${(await plan.sql()).trim()}\n`);
  return { file, pending: plan.pending };
}

/** An empty in-memory SQLite: where the sqlite files are replayed. */
export function scratchSqlite(): DatabaseHandle {
  return createDb({ kind: "sqlite", file: ":memory:" });
}

/**
 * A temporary database on the PostgreSQL server of `serverUrl` (its user needs CREATEDB),
 * dropped afterwards whatever happens. The database named in the URL is only used to connect.
 */
export async function withScratchPostgres<T>(serverUrl: string, use: (scratch: DatabaseHandle) => Promise<T>): Promise<T> {
  const name = `idp_schema_scratch_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    const scratch = createDb({ kind: "postgres", url: url.toString() });
    try {
      return await use(scratch);
    } finally {
      await scratch.close();
    }
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

export async function withScratch<T>(dialect: Dialect, postgresUrl: string | undefined, use: (scratch: DatabaseHandle) => Promise<T>): Promise<T> {
  if (dialect === "postgres") {
    if (!postgresUrl) throw new Error("a PostgreSQL server URL is needed to generate the postgres migrations");
    return withScratchPostgres(postgresUrl, use);
  }
  const scratch = scratchSqlite();
  try {
    return await use(scratch);
  } finally {
    await scratch.close();
  }
}
