import type { Kysely } from "kysely";
import type { Logger } from "../../lib/logger.js";
import { startRounds } from "../../lib/rounds.js";
import { deleteExpiredClientAssertions } from "../oauth-store/clients.js";
import type { Database } from "../../lib/db/tables.js";

/** Past an assertion's `exp` by this much before its record goes (clock skew between instances). */
const SKEW_MS = 5 * 60 * 1000;
const BATCH = 1000;

/**
 * Deletes the records of spent private_key_jwt assertions once they expired (each machine
 * client adds one per token request), at start-up and then hourly, in batches. Every instance
 * may run it: a delete is idempotent. A failed round is logged and tried again at the next.
 */
export function startAssertionExpiry(options: { db: Kysely<Database>; logger: Logger; everyMs?: number }): { stop(): void } {
  const { db, logger } = options;
  return startRounds(
    async () => {
      while ((await deleteExpiredClientAssertions(db, new Date(Date.now() - SKEW_MS), BATCH)) === BATCH);
    },
    { everyMs: options.everyMs ?? 60 * 60 * 1000, failed: (err) => logger.warn("expired client assertions not deleted; retrying next round", { err: err instanceof Error ? err.message : String(err) }) },
  );
}
