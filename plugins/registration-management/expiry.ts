import type { Kysely } from "kysely";
import type { Logger } from "../../lib/logger.js";
import { startRounds } from "../../lib/rounds.js";
import { expireUnusedAnonymousClients } from "./store.js";
import type { Database } from "../../lib/db/tables.js";

const DAY = 24 * 60 * 60 * 1000;

/**
 * Deletes anonymous registrations no token was issued to for `ttlDays` (ANONYMOUS_CLIENT_TTL_DAYS),
 * at start-up and then hourly, in batches. Every instance may run it: a delete is idempotent.
 * A failed round (database away) is logged and tried again at the next.
 */
export function startClientExpiry(options: { db: Kysely<Database>; ttlDays: number; logger: Logger; everyMs?: number }): { stop(): void } {
  const { db, ttlDays, logger } = options;
  return startRounds(
    async () => {
      let deleted: string[];
      do {
        deleted = await expireUnusedAnonymousClients(db, new Date(Date.now() - ttlDays * DAY));
        if (deleted.length) logger.info("unused anonymous client registrations deleted", { count: deleted.length, ttlDays });
      } while (deleted.length === 500);
    },
    { everyMs: options.everyMs ?? 60 * 60 * 1000, failed: (err) => logger.warn("client registration expiry failed; retrying next round", { err: err instanceof Error ? err.message : String(err) }) },
  );
}
