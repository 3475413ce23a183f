/**
 * Writes the next numbered migration per dialect into schema/<dialect>/ (nothing when the
 * committed files already give the code's schema). Each dialect's files are replayed on a
 * scratch database and better-auth's planner diffs that against the code: an in-memory
 * SQLite, and a temporary database created (and dropped) on a PostgreSQL server.
 *
 *   npm run db:generate [-- --name add_thing] [--dialect sqlite|postgres] [--postgres-url URL] [--dir DIR]
 *
 * The PostgreSQL server is --postgres-url, or DATABASE_URL when that is a postgres URL; its
 * user needs CREATEDB. Without one, only `--dialect sqlite` runs: both dialects must move together.
 */
import { parseArgs } from "node:util";
import { loadEnv } from "../lib/env.js";
import { SCHEMA_DIR, type Dialect } from "../lib/schema-files.js";
import { generateMigration, nextMigrationNumber, withScratch } from "../schema/generate.js";

const { values: args } = parseArgs({
  options: { name: { type: "string" }, dialect: { type: "string" }, "postgres-url": { type: "string" }, dir: { type: "string" } },
});
if (args.name !== undefined && !/^[a-z0-9_]+$/.test(args.name)) fail("--name: lower-case letters, digits and _ only");
if (args.dialect !== undefined && args.dialect !== "sqlite" && args.dialect !== "postgres") fail("--dialect: sqlite or postgres");
const dialects: Dialect[] = args.dialect ? [args.dialect as Dialect] : ["sqlite", "postgres"];
const configured = loadEnv().database;
const postgresUrl = args["postgres-url"] ?? (configured.kind === "postgres" ? configured.url : undefined);
if (dialects.includes("postgres") && !postgresUrl) {
  fail("the postgres migration needs a PostgreSQL server for a scratch database: pass --postgres-url postgres://user@host/postgres (or set DATABASE_URL to one), or --dialect sqlite");
}

const dir = args.dir ?? SCHEMA_DIR;
const number = nextMigrationNumber(dir);
for (const dialect of dialects) {
  const written = await withScratch(dialect, postgresUrl, (scratch) => generateMigration(scratch, { dir, number, name: args.name }));
  if (written) process.stdout.write(`${dialect}: wrote ${written.file} (${written.pending.length} change(s))\n`);
  else process.stderr.write(`${dialect}: schema is up to date, nothing written\n`);
}

function fail(message: string): never {
  process.stderr.write(`db:generate: ${message}\n`);
  process.exit(2);
}
