import type { Kysely } from "kysely";
import type { Database } from "../../lib/db/tables.js";
import type { Logger } from "../../lib/logger.js";
import { startPruning } from "../../lib/rounds.js";
import { deleteExpiredRequests } from "./store.js";

/**
 * Deletes CIBA requests an hour after they expired (a late poll still hears expired_token, not
 * invalid_grant until then), at start-up and then hourly.
 */
export function startCibaExpiry(options: { db: Kysely<Database>; logger: Logger; everyMs?: number }): { stop(): void } {
  return startPruning({ what: "expired CIBA requests", prune: (before, batch) => deleteExpiredRequests(options.db, before, batch), graceMs: 60 * 60 * 1000, ...options });
}
