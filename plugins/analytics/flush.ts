import type { Kysely } from "kysely";
import type { Logger } from "../../lib/logger.js";
import type { Database } from "../../lib/db/tables.js";
import { existingClientIds } from "../oauth-store/clients.js";
import { SEPARATOR, type AnalyticsCounter } from "./counter.js";
import { writeAnalyticsBatch } from "./store.js";

export interface AnalyticsFlushOptions {
  db: Kysely<Database>;
  counter: AnalyticsCounter;
  logger: Logger;
  /** ANALYTICS_FLUSH_MS: how often the batch is written. */
  everyMs: number;
}

export type AnalyticsFlusher = ReturnType<typeof startAnalyticsFlush>;

/**
 * Writes this instance's analytics counters to the database every `everyMs` and at `stop()`.
 * Each instance writes its own batch; the upserts add up (./store.ts). Only one write runs at a
 * time; a failed one (database away) puts its batch back for the next round, so counts are
 * delayed, not lost, while the process lives. Counts for a client_id that names no client are
 * dropped here, off the request path.
 */
export function startAnalyticsFlush({ db, counter, logger, everyMs }: AnalyticsFlushOptions) {
  let writing: Promise<void> = Promise.resolve();

  async function write() {
    const { batch, dropped } = counter.take();
    if (dropped) logger.warn("analytics counts dropped: too many distinct keys between two flushes", { dropped });
    if (!batch.counts.size && !batch.people.size) return;
    try {
      const clients = new Set<string>();
      for (const id of batch.counts.keys()) clients.add(id.split(SEPARATOR)[1]!);
      for (const id of batch.people) clients.add(id.split(SEPARATOR)[1]!);
      await writeAnalyticsBatch(db, batch, await existingClientIds(db, [...clients]));
    } catch (err) {
      counter.restore(batch);
      logger.warn("analytics flush failed; retrying next round", { err: err instanceof Error ? err.message : String(err) });
    }
  }

  /** Writes what was counted so far; resolves once it is in the database (tests wait on it). */
  function flush(): Promise<void> {
    writing = writing.then(write);
    return writing;
  }

  const timer = setInterval(() => void flush(), everyMs);
  timer.unref();
  return {
    flush,
    /** The last write, at shutdown (before the database closes). */
    async stop() {
      clearInterval(timer);
      await flush();
    },
  };
}
