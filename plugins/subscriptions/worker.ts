import type { Kysely } from "kysely";
import type { Logger } from "../../lib/logger.js";
import { claimDueJobs, completeJob, failAttempt, waitJob, type MintJob } from "./mint-job-store.js";
import { MintUnavailable, type BuyerWallet, type Minter } from "./minter.js";
import { isTierId } from "./tiers.js";
import type { Database } from "../../lib/db/tables.js";

export interface MintWorkerOptions {
  db: Kysely<Database>;
  minter: Minter;
  wallets: BuyerWallet;
  logger: Logger;
  /** How often due jobs are looked for. @default 5000 */
  pollMs?: number;
  /** Delay after the first failed attempt; doubled after each further one. @default 30000 */
  baseDelayMs?: number;
  /** Longest delay between attempts. @default 3600000 */
  maxDelayMs?: number;
  /** Attempts before a job is left `failed` for manual handling. @default 8 */
  maxAttempts?: number;
  /** How long a job waits for a missing wallet or minting service before it looks again. @default 300000 */
  waitMs?: number;
  /** How long a claimed job is this worker's (another instance takes it up after). @default 120000 */
  lockMs?: number;
}

export type MintWorker = ReturnType<typeof startMintWorker>;

/**
 * Runs the mint queue (./mint-job-store.ts): claims due jobs, mints, and on failure tries again
 * with exponential backoff. A tick that fails (the database is down) is logged and the next
 * one comes as usual: the worker never takes the process down.
 */
export function startMintWorker(options: MintWorkerOptions) {
  const { db, minter, wallets, logger } = options;
  const pollMs = options.pollMs ?? 5000;
  const baseDelayMs = options.baseDelayMs ?? 30_000;
  const maxDelayMs = options.maxDelayMs ?? 3_600_000;
  const maxAttempts = options.maxAttempts ?? 8;
  const waitMs = options.waitMs ?? 300_000;
  const lockMs = options.lockMs ?? 120_000;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  let again = false;

  const later = (ms: number) => new Date(Date.now() + ms);
  /** Exponential backoff: base, 2 x base, 4 x base, ... up to maxDelayMs. */
  const backoff = (attempts: number) => Math.min(maxDelayMs, baseDelayMs * 2 ** (attempts - 1));

  async function runJob(job: MintJob) {
    if (!isTierId(job.tier) || job.tier === "free") {
      await failAttempt(db, job.id, job.attempts + 1, `No NFT exists for tier "${job.tier}".`, null);
      return;
    }
    try {
      const walletAddress = await wallets.walletAddressOf(job.userId);
      if (!walletAddress) throw new MintUnavailable("The buyer has no connected wallet to mint to; waiting for one.");
      const { nftOrigin } = await minter.mint({ jobId: job.id, paymentId: job.paymentId, userId: job.userId, tier: job.tier, walletAddress });
      await completeJob(db, job.id, { walletAddress, nftOrigin });
      logger.info("tier NFT minted", { jobId: job.id, userId: job.userId, tier: job.tier, nftOrigin });
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      if (err instanceof MintUnavailable) {
        await waitJob(db, job.id, reason, later(waitMs));
        logger.warn("mint job waiting", { jobId: job.id, reason });
        return;
      }
      const attempts = job.attempts + 1;
      const next = attempts < maxAttempts ? later(backoff(attempts)) : null;
      await failAttempt(db, job.id, attempts, reason, next);
      if (next) logger.warn("mint attempt failed; will retry", { jobId: job.id, attempts, retryAt: next.toISOString(), reason });
      else logger.error("mint job failed for good; needs manual handling", { jobId: job.id, paymentId: job.paymentId, attempts, reason });
    }
  }

  async function tick() {
    try {
      do {
        again = false;
        for (const job of await claimDueJobs(db, new Date(), lockMs, 10)) {
          if (stopped) return;
          await runJob(job);
        }
      } while (again && !stopped);
    } catch (err) {
      logger.error("mint worker tick failed; trying again at the next poll", { err });
    }
  }

  function schedule() {
    if (stopped) return;
    timer = setTimeout(() => {
      running = tick().finally(() => {
        running = undefined;
        schedule();
      });
    }, pollMs);
    timer.unref();
  }

  schedule();
  return {
    /** Looks for due jobs now (a job was just queued) instead of at the next poll. */
    wake() {
      if (stopped) return;
      if (running) {
        again = true;
        return;
      }
      clearTimeout(timer);
      running = tick().finally(() => {
        running = undefined;
        schedule();
      });
    },
    /** Stops polling and waits for the job in hand. */
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
