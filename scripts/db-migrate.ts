/** Applies pending schema changes to the configured database. Idempotent. */
import { authOptions } from "../auth.config.js";
import { createDb } from "../lib/db.js";
import { loadEnv } from "../lib/env.js";
import { createLogger } from "../lib/logger.js";
import { planMigrations } from "../lib/migrate.js";

const config = loadEnv();
const database = createDb(config.database);
try {
  const plan = await planMigrations(authOptions({ config, database, logger: createLogger("error") }));
  if (!plan.pending.length) {
    process.stdout.write(`${config.database.kind}: schema is up to date, nothing to do\n`);
  } else {
    await plan.apply();
    process.stdout.write(`${config.database.kind}: applied ${plan.pending.length} change(s)\n`);
  }
} finally {
  await database.close();
}
