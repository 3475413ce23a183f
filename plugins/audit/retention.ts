import type { Kysely } from "kysely";
import type { Logger } from "../../lib/logger.js";
import { leaseHolder, releaseLease, takeLease } from "../job-lease/store.js";
import { pruneAuditEvents } from "./store.js";
import type { Database } from "../../lib/db/tables.js";

const DAY = 24 * 60 * 60 * 1000;
/** The lease (plugins/job-lease) that makes one instance at a time the pruner. */
export const AUDIT_RETENTION_JOB = "audit-log-retention";

export interface AuditRetentionOptions {
  db: Kysely<Database>;
  logger: Logger;
  /** AUDIT_LOG_RETENTION_DAYS: events older than this are deleted. */
  retentionDays: number;
  /** How often a round runs (the first at start-up). @default 3600000 */
  everyMs?: number;
  /** How long a round's lease holds before another instance may take it; renewed before every batch. @default 2 x everyMs */
  leaseMs?: number;
  /** Rows deleted per statement. @default 1000 */
  batchSize?: number;
  /** This instance's name in the lease. @default host:pid:random */
  holder?: string;
}

/**
 * Deletes audit events older than AUDIT_LOG_RETENTION_DAYS, at start-up and then every hour.
 * Several instances may share the database: a round runs only in the instance holding the
 * `audit-log-retention` lease (one upsert, plugins/job-lease/store.ts), which keeps it while it
 * runs and renews it each round; the others skip. The rows go in batches of `batchSize`, each
 * its own short statement, with the lease renewed between them, so a large backlog never holds
 * a long lock and a round stops if its lease was lost. A failed round (database away) is logged
 * and tried again at the next. `stop()` waits for the batch in hand and gives the lease up.
 */
export function startAuditRetention(options: AuditRetentionOptions) {
  const { db, logger, retentionDays } = options;
  const everyMs = options.everyMs ?? 60 * 60 * 1000;
  const leaseMs = options.leaseMs ?? 2 * everyMs;
  const batchSize = options.batchSize ?? 1000;
  const holder = options.holder ?? leaseHolder();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;

  async function round() {
    try {
      if (!(await takeLease(db, AUDIT_RETENTION_JOB, holder, leaseMs))) {
        logger.debug("audit log pruning skipped: another instance holds the lease", { job: AUDIT_RETENTION_JOB });
        return;
      }
      const olderThan = new Date(Date.now() - retentionDays * DAY);
      let deleted = 0;
      let batches = 0;
      for (;;) {
        const count = await pruneAuditEvents(db, olderThan, batchSize);
        deleted += count;
        batches += 1;
        if (count < batchSize || stopped) break;
        // Let waiting requests in between batches (SQLite runs in this thread), and make sure
        // the lease is still ours before the next one.
        await new Promise((resolve) => setImmediate(resolve));
        if (!(await takeLease(db, AUDIT_RETENTION_JOB, holder, leaseMs))) {
          logger.warn("audit log pruning stopped: the lease went to another instance", { job: AUDIT_RETENTION_JOB, deleted });
          return;
        }
      }
      if (deleted) logger.info("audit log pruned", { deleted, batches, retentionDays, holder });
    } catch (err) {
      logger.warn("audit log pruning failed; retrying next round", { err: err instanceof Error ? err.message : String(err) });
    }
  }

  function schedule(delay: number) {
    if (stopped) return;
    timer = setTimeout(() => {
      running = round().finally(() => {
        running = undefined;
        schedule(everyMs);
      });
    }, delay);
    timer.unref();
  }

  schedule(0);
  return {
    holder,
    /** Stops the rounds, waits for the batch in hand, and gives the lease up for another instance. */
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
      await releaseLease(db, AUDIT_RETENTION_JOB, holder).catch((err: unknown) => logger.warn("audit log lease not released", { err: err instanceof Error ? err.message : String(err) }));
    },
  };
}
