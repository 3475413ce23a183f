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
