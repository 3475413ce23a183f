import { randomUUID } from "node:crypto";
import type { ExpressionBuilder, Kysely } from "kysely";
import { rowReader } from "../../lib/db/sqlite-values.js";
import type { Database } from "../../lib/db/tables.js";

/**
 * Every read and write of `mintJob`, the durable queue of tier-NFT mints. A job is `pending`
 * (due at `nextAttemptAt`), `running` (claimed by one worker until `lockedUntil`), `done`
 * or `failed` (out of attempts; for manual handling).
 */
export type MintJobStatus = "pending" | "running" | "done" | "failed";

export interface MintJob {
  id: string;
  paymentId: string;
  userId: string;
  tier: string;
  status: MintJobStatus;
  attempts: number;
  nextAttemptAt: Date;
  lastError: string | null;
  walletAddress: string | null;
  nftOrigin: string | null;
  periodEnd: Date | null;
  subscriptionStatus: string | null;
  cancelAtPeriodEnd: boolean | null;
  completedAt: Date | null;
}

/** The period a tier NFT is paid for, kept on its mint job (spec, "Subscription": a month that ends). */
export interface Period {
  periodEnd: Date;
  /** Stripe's subscription status (active, past_due, canceled, ...); null for a one-time payment. */
  subscriptionStatus: string | null;
  cancelAtPeriodEnd: boolean;
}

const readJob = rowReader("mintJob", ["id", "paymentId", "userId", "tier", "status", "attempts", "nextAttemptAt", "lastError", "walletAddress", "nftOrigin", "periodEnd", "subscriptionStatus", "cancelAtPeriodEnd", "completedAt"]);

const readPeriod = rowReader("mintJob", ["nftOrigin", "periodEnd", "subscriptionStatus", "cancelAtPeriodEnd"]);

/** `status` is text in the table; this store writes it only from a `MintJobStatus`. */
function toJob(row: Parameters<typeof readJob>[0]): MintJob {
  const job = readJob(row);
  return { ...job, status: job.status as MintJobStatus };
}

/** Queues a mint, due now, with the period paid for; `waitReason` records why it cannot run yet (no minting service here). */
export async function enqueueMint(db: Kysely<Database>, job: { paymentId: string; userId: string; tier: string }, period: Period, waitReason: string | null = null): Promise<void> {
  const now = new Date();
  await db
    .insertInto("mintJob")
    .values({ id: randomUUID(), ...job, ...period, status: "pending", attempts: 0, nextAttemptAt: now, lastError: waitReason, createdAt: now, updatedAt: now })
    .execute();
}

/**
 * What Stripe reported about the subscription behind a payment's NFT. `periodEnd` only ever
 * moves on (a paid invoice); a redelivered or late older event cannot shorten a period.
 */
export async function updatePeriod(db: Kysely<Database>, paymentId: string, change: Partial<Period>): Promise<boolean> {
  const now = new Date();
  const { periodEnd, ...state } = change;
  let changed = false;
  if (periodEnd) {
    const result = await db
      .updateTable("mintJob")
      .set({ periodEnd, updatedAt: now })
      .where("paymentId", "=", paymentId)
      .where((eb) => eb.or([eb("periodEnd", "is", null), eb("periodEnd", "<", periodEnd)]))
      .executeTakeFirst();
    changed = Number(result.numUpdatedRows) > 0;
  }
  if (Object.keys(state).length) {
    const result = await db.updateTable("mintJob").set({ ...state, updatedAt: now }).where("paymentId", "=", paymentId).executeTakeFirst();
    changed ||= Number(result.numUpdatedRows) > 0;
  }
  return changed;
}

export async function findMintJobByPayment(db: Kysely<Database>, paymentId: string): Promise<MintJob | null> {
  const row = await db.selectFrom("mintJob").selectAll().where("paymentId", "=", paymentId).executeTakeFirst();
  return row ? toJob(row) : null;
}

/** Due now: pending and past its time, or running under a lock that ran out (its worker died). */
const due = (now: Date) => (eb: ExpressionBuilder<Database, "mintJob">) =>
  eb.or([
    eb.and([eb("status", "=", "pending"), eb("nextAttemptAt", "<=", now)]),
    eb.and([eb("status", "=", "running"), eb("lockedUntil", "<", now)]),
  ]);

/**
 * Claims up to `limit` due jobs for this worker until `now + lockMs`. Each claim is a
 * conditional update, so two workers (two instances) never run the same job at once.
 */
export async function claimDueJobs(db: Kysely<Database>, now: Date, lockMs: number, limit: number): Promise<MintJob[]> {
  const candidates = await db.selectFrom("mintJob").selectAll().where(due(now)).orderBy("nextAttemptAt", "asc").limit(limit).execute();
  const claimed: MintJob[] = [];
  for (const row of candidates) {
    const result = await db
      .updateTable("mintJob")
      .set({ status: "running", lockedUntil: new Date(now.getTime() + lockMs), updatedAt: now })
      .where("id", "=", row.id)
      .where(due(now))
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 1) claimed.push({ ...toJob(row), status: "running" });
  }
  return claimed;
}

/**
 * Of `origins`, those a completed mint job of `tier` produced (the tier NFTs this service
 * minted) whose period is current at `now`, with that period. An ordinal's origin never changes
 * when it moves, so this holds for whoever has it now, for what is left of the period.
 */
export async function currentOrigins(db: Kysely<Database>, tier: string, origins: readonly string[], now = new Date()): Promise<Map<string, Period>> {
  const wanted = [...new Set(origins)];
  const minted = new Map<string, Period>();
  // In slices: the list is the user's own (up to 100 NFTs per wallet), kept well under bind-parameter limits.
  for (let i = 0; i < wanted.length; i += 500) {
    const rows = await db
      .selectFrom("mintJob")
      .select(["nftOrigin", "periodEnd", "subscriptionStatus", "cancelAtPeriodEnd"])
      .where("status", "=", "done")
      .where("tier", "=", tier)
      .where("periodEnd", ">", now)
      .where("nftOrigin", "in", wanted.slice(i, i + 500))
      .execute();
    for (const row of rows) {
      const job = readPeriod(row);
      minted.set(job.nftOrigin as string, { periodEnd: job.periodEnd!, subscriptionStatus: job.subscriptionStatus, cancelAtPeriodEnd: job.cancelAtPeriodEnd ?? false });
    }
  }
  return minted;
}

export async function completeJob(db: Kysely<Database>, id: string, result: { walletAddress: string; nftOrigin: string }): Promise<void> {
  const now = new Date();
  await db
    .updateTable("mintJob")
    .set({ status: "done", ...result, lastError: null, lockedUntil: null, completedAt: now, updatedAt: now })
    .where("id", "=", id)
    .execute();
}

/** A failed attempt: counted, and tried again at `nextAttemptAt`, or `failed` for good. */
export async function failAttempt(db: Kysely<Database>, id: string, attempts: number, error: string, nextAttemptAt: Date | null): Promise<void> {
  await db
    .updateTable("mintJob")
    .set({ status: nextAttemptAt ? "pending" : "failed", attempts, lastError: error, nextAttemptAt: nextAttemptAt ?? new Date(), lockedUntil: null, updatedAt: new Date() })
    .where("id", "=", id)
    .execute();
}

/** Not an attempt: something the job needs is missing (a wallet, a minting service); look again later. */
export async function waitJob(db: Kysely<Database>, id: string, reason: string, nextAttemptAt: Date): Promise<void> {
  await db.updateTable("mintJob").set({ status: "pending", lastError: reason, nextAttemptAt, lockedUntil: null, updatedAt: new Date() }).where("id", "=", id).execute();
}
