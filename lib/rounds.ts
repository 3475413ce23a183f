import type { Logger } from "./logger.js";

/**
 * A housekeeping job as rounds: one at start-up, then one every `everyMs`, never two at once in
 * this process (a round still running when the next is due lets it pass). A round that throws
 * is reported to `failed` and the next one tries again. The timer does not keep the process alive.
 */
export function startRounds(round: () => Promise<void>, options: { everyMs: number; failed(err: unknown): void }): { stop(): void } {
  let running = false;
  const once = async () => {
    if (running) return;
    running = true;
    try {
      await round();
    } catch (err) {
      options.failed(err);
    } finally {
      running = false;
    }
  };
  void once();
  const timer = setInterval(() => void once(), options.everyMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

/**
 * Housekeeping that deletes what expired more than `graceMs` ago, in batches of `batch` until a
 * batch comes back short, at start-up and then every `everyMs` (hourly). Every instance may run
 * it: a delete is idempotent. A failed round is logged (`what` names the rows) and tried again.
 */
export function startPruning(options: {
  what: string;
  prune: (expiredBefore: Date, batch: number) => Promise<number>;
  graceMs: number;
  logger: Pick<Logger, "warn">;
  everyMs?: number;
  batch?: number;
}): { stop(): void } {
  const { what, prune, graceMs, logger, batch = 1000 } = options;
  return startRounds(
    async () => {
      while ((await prune(new Date(Date.now() - graceMs), batch)) === batch);
    },
    { everyMs: options.everyMs ?? 60 * 60 * 1000, failed: (err) => logger.warn(`${what} not deleted; retrying next round`, { err: err instanceof Error ? err.message : String(err) }) },
  );
}
