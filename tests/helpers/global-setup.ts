import { createDb } from "../../lib/db/connection.js";
import { loadEnv } from "../../lib/env.js";
import { applyMigrations, baselineLegacyDatabase } from "../../lib/migrate.js";

/**
 * With TEST_DATABASE_URL=postgres://..., apply schema/postgres/ to that database once before
 * the files run in parallel (each SQLite test server has its own file and migrates itself).
 */
export default async function setup() {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) return;
  const config = loadEnv({ DATABASE_URL: url, BETTER_AUTH_SECRET: "x".repeat(32), LOG_LEVEL: "silent" });
  const database = createDb(config.database);
  try {
    await baselineLegacyDatabase(database);
    await applyMigrations(database);
  } finally {
    await database.close();
  }
}
