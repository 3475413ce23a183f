import type { Kysely } from "kysely";
import type { Logger } from "../../lib/logger.js";
import { startPruning } from "../../lib/rounds.js";
import { deleteExpiredClientAssertions } from "../oauth-store/clients.js";
import type { Database } from "../../lib/db/tables.js";

/**
 * Deletes the records of spent private_key_jwt assertions (each machine client adds one per
 * token request) five minutes past their `exp` (clock skew between instances), at start-up
 * and then hourly.
 */
export function startAssertionExpiry(options: { db: Kysely<Database>; logger: Logger; everyMs?: number }): { stop(): void } {
  return startPruning({ what: "expired client assertions", prune: (before, batch) => deleteExpiredClientAssertions(options.db, before, batch), graceMs: 5 * 60 * 1000, ...options });
}
