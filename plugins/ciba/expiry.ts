import type { Kysely } from "kysely";
import type { Database } from "../../lib/db/tables.js";
import type { Logger } from "../../lib/logger.js";
import { startRounds } from "../../lib/rounds.js";
import { deleteExpiredRequests } from "./store.js";

/** Kept this long past their expiry (a late poll still hears expired_token, not invalid_grant). */
const GRACE_MS = 60 * 60 * 1000;
const BATCH = 1000;

/**
 * Deletes CIBA requests an hour after they expired, at start-up and then hourly, in batches.
 * Every instance may run it: a delete is idempotent. A failed round is logged and tried again.
 */
export function startCibaExpiry(options: { db: Kysely<Database>; logger: Logger; everyMs?: number }): { stop(): void } {
  const { db, logger } = options;
  return startRounds(
    async () => {
      while ((await deleteExpiredRequests(db, new Date(Date.now() - GRACE_MS), BATCH)) === BATCH);
    },
    { everyMs: options.everyMs ?? 60 * 60 * 1000, failed: (err) => logger.warn("expired CIBA requests not deleted; retrying next round", { err: err instanceof Error ? err.message : String(err) }) },
  );
}
