/**
 * Applies the pending schema/<dialect>/ migrations to the configured database, in order, and
 * records them; a database made before schema/ existed is baselined first (lib/migrate.ts).
 * Idempotent.   npm run db:migrate [-- --dir DIR]
 */
import { parseArgs } from "node:util";
import { createDb } from "../lib/db/connection.js";
import { loadEnv } from "../lib/env.js";
import { applyMigrations, baselineLegacyDatabase } from "../lib/migrate.js";
import { SCHEMA_DIR } from "../lib/schema-files.js";

const { values: args } = parseArgs({ options: { dir: { type: "string" } } });
const dir = args.dir ?? SCHEMA_DIR;
const config = loadEnv();
const database = createDb(config.database);
try {
  const baseline = await baselineLegacyDatabase(database, dir);
  if (baseline.length) process.stdout.write(`${config.database.kind}: recorded ${baseline.join(", ")} as applied (the tables were already there)\n`);
  const applied = await applyMigrations(database, dir);
  if (!applied.length) process.stdout.write(`${config.database.kind}: schema is up to date, nothing to do\n`);
  else process.stdout.write(`${config.database.kind}: applied ${applied.length} migration(s): ${applied.join(", ")}\n`);
} finally {
  await database.close();
}
