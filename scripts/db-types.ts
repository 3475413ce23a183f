/**
 * Writes lib/db/tables.ts, the `Database` interface of every table, from the schema/ files
 * (replayed on an in-memory SQLite) and the code's schema (schema/types.ts). Run it after
 * `npm run db:generate`; tests/meta/db-types.test.ts fails while the committed file is stale.
 *
 *   npm run db:types [-- --check]
 */
import { readFileSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { scratchSqlite } from "../schema/generate.js";
import { TABLE_TYPES_FILE, generateTableTypes } from "../schema/types.js";

const { values: args } = parseArgs({ options: { check: { type: "boolean" } } });
const scratch = scratchSqlite();
try {
  const text = await generateTableTypes(scratch);
  if (args.check) {
    const same = readFileSync(TABLE_TYPES_FILE, "utf8") === text;
    process.stderr.write(same ? "db:types: lib/db/tables.ts is up to date\n" : "db:types: lib/db/tables.ts differs from schema/: run npm run db:types\n");
    process.exitCode = same ? 0 : 1;
  } else {
    writeFileSync(TABLE_TYPES_FILE, text);
    process.stdout.write(`db:types: wrote ${TABLE_TYPES_FILE}\n`);
  }
} finally {
  await scratch.close();
}
