import type { Kysely } from "kysely";
import type { Logger } from "../../lib/logger.js";
import { startRounds } from "../../lib/rounds.js";
import { progressRevocation, type RevocationChain } from "./revocation.js";
import { listRevocationsInProgress } from "./store.js";
import type { Database } from "../../lib/db/tables.js";

/** Revocations looked at per round. */
const BATCH = 100;

/**
 * Moves revocations on without anyone asking: every round, each revocation not yet final takes
 * the steps the chain allows (a `prepared` one left by a broadcaster that was down is sent, a
 * sent one is looked up until it is confirmed). Status reads and revoke calls do the same
 * (routes/certificates/certificates.ts); every move is compare-and-set, so instances and
 * requests can race safely. A failure leaves that revocation for the next round.
 */
export function startRevocationWatch(options: { db: Kysely<Database>; chain: RevocationChain; depth: number; logger: Logger; everyMs?: number }): { stop(): void } {
  const { db, chain, depth, logger } = options;
  return startRounds(
    async () => {
      for (const cert of await listRevocationsInProgress(db, BATCH)) {
        const moved = await progressRevocation(db, chain, depth, cert).catch((err: unknown) => {
          logger.warn("revocation not moved on; retrying next round", { serialNumber: cert.serialNumber, err: err instanceof Error ? err.message : String(err) });
          return cert;
        });
        if (moved.revocationState !== cert.revocationState) logger.info("revocation moved on", { serialNumber: cert.serialNumber, state: moved.revocationState });
      }
    },
    { everyMs: options.everyMs ?? 60_000, failed: (err) => logger.warn("revocation watch failed; retrying next round", { err: err instanceof Error ? err.message : String(err) }) },
  );
}
