/** Prints the SQL that brings the configured database up to date (nothing when it is). */
import { authOptions } from "../auth.config.js";
import { createDb } from "../lib/db.js";
import { loadEnv } from "../lib/env.js";
import { createLogger } from "../lib/logger.js";
import { planMigrations } from "../lib/migrate.js";

const config = loadEnv();
const database = createDb(config.database);
try {
  const plan = await planMigrations(authOptions({ config, database, logger: createLogger("error") }));
  if (!plan.pending.length) process.stderr.write(`-- ${config.database.kind}: schema is up to date\n`);
  else process.stdout.write(`-- ${config.database.kind}: ${plan.pending.length} change(s)\n${await plan.sql()}\n`);
} finally {
  await database.close();
}
