import { createHash } from "node:crypto";
import type { Kysely } from "kysely";
import type { Database } from "../../lib/db/tables.js";

/**
 * Every read and write of the `cibaRequest` table (./schema.ts). Each change of state is one
 * conditional write (the status it expects is in the `where`), so of two answers racing on
 * PostgreSQL (approve and deny, or two token requests) exactly one wins.
 */

export type CibaStatus = "pending" | "approved" | "denied" | "redeemed";

export interface CibaRequest {
  id: string;
  clientId: string;
  userId: string;
  referenceId: string | null;
  scope: string;
  bindingMessage: string | null;
  authorizationDetails: string | null;
  acrValues: string | null;
  strong: boolean;
  status: CibaStatus;
  deliveryMode: "poll" | "ping";
  notificationToken: string | null;
  pingAuthReqId: string | null;
  dpopJkt: string | null;
  interval: number;
  lastPolledAt: Date | null;
  expiresAt: Date;
  decidedAt: Date | null;
  createdAt: Date;
}

export type NewCibaRequest = Omit<CibaRequest, "status" | "lastPolledAt" | "decidedAt" | "createdAt">;

/** How the `auth_req_id` is stored: SHA-256, base64url. */
export const hashAuthReqId = (authReqId: string) => createHash("sha256").update(authReqId).digest("base64url");

const date = (value: unknown) => (value === null || value === undefined ? null : new Date(value as string));

function toRequest(row: Record<string, unknown>): CibaRequest {
  return {
    id: row.id as string,
    clientId: row.clientId as string,
    userId: row.userId as string,
    referenceId: (row.referenceId as string | null) ?? null,
    scope: row.scope as string,
    bindingMessage: (row.bindingMessage as string | null) ?? null,
    authorizationDetails: (row.authorizationDetails as string | null) ?? null,
    acrValues: (row.acrValues as string | null) ?? null,
    strong: Boolean(row.strong),
    status: row.status as CibaStatus,
    deliveryMode: row.deliveryMode === "ping" ? "ping" : "poll",
    notificationToken: (row.notificationToken as string | null) ?? null,
    pingAuthReqId: (row.pingAuthReqId as string | null) ?? null,
    dpopJkt: (row.dpopJkt as string | null) ?? null,
    interval: Number(row.interval),
    lastPolledAt: date(row.lastPolledAt),
    expiresAt: new Date(row.expiresAt as string),
    decidedAt: date(row.decidedAt),
    createdAt: new Date(row.createdAt as string),
  };
}

/**
 * Records a request unless the person already has `maxPending` requests waiting; their expired
 * rows go first (they count for nothing). Counting and inserting share a transaction.
 */
export async function createRequest(db: Kysely<Database>, request: NewCibaRequest & { authReqIdHash: string }, maxPending: number): Promise<boolean> {
  const now = new Date();
  return db.transaction().execute(async (trx) => {
    await trx.deleteFrom("cibaRequest").where("userId", "=", request.userId).where("expiresAt", "<=", now).execute();
    const { count } = await trx
      .selectFrom("cibaRequest")
      .select((eb) => eb.fn.countAll<string | number>().as("count"))
      .where("userId", "=", request.userId)
      .where("status", "=", "pending")
      .executeTakeFirstOrThrow();
    if (Number(count) >= maxPending) return false;
    await trx.insertInto("cibaRequest").values({ ...request, status: "pending", lastPolledAt: null, decidedAt: null, createdAt: now }).execute();
    return true;
  });
}

export async function findByAuthReqId(db: Kysely<Database>, authReqId: string): Promise<CibaRequest | null> {
  const row = await db.selectFrom("cibaRequest").selectAll().where("authReqIdHash", "=", hashAuthReqId(authReqId)).executeTakeFirst();
  return row ? toRequest(row) : null;
}

/** A request by its page id, only for the person it is addressed to: anyone else gets null. */
export async function findRequestFor(db: Kysely<Database>, id: string, userId: string): Promise<CibaRequest | null> {
  const row = await db.selectFrom("cibaRequest").selectAll().where("id", "=", id).where("userId", "=", userId).executeTakeFirst();
  return row ? toRequest(row) : null;
}

/** The person's requests still waiting for an answer, newest first. */
export async function listPendingFor(db: Kysely<Database>, userId: string): Promise<CibaRequest[]> {
  const rows = await db
    .selectFrom("cibaRequest")
    .selectAll()
    .where("userId", "=", userId)
    .where("status", "=", "pending")
    .where("expiresAt", ">", new Date())
    .orderBy("createdAt", "desc")
    .execute();
  return rows.map(toRequest);
}

/** Approve or deny: only a pending, unexpired request of this person; true when this write decided it. */
export async function decideRequest(db: Kysely<Database>, id: string, userId: string, status: "approved" | "denied"): Promise<boolean> {
  const now = new Date();
  const result = await db
    .updateTable("cibaRequest")
    .set({ status, decidedAt: now })
    .where("id", "=", id)
    .where("userId", "=", userId)
    .where("status", "=", "pending")
    .where("expiresAt", ">", now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * A poll at `now`: true when it came no sooner than the interval after the last one (it is
 * recorded), false when it was too soon (CIBA §11 slow_down: the interval grows by 5 seconds).
 */
export async function recordPoll(db: Kysely<Database>, request: CibaRequest, now = new Date()): Promise<boolean> {
  const last = request.lastPolledAt;
  const tooSoon = last !== null && now.getTime() - last.getTime() < request.interval * 1000;
  const base = db.updateTable("cibaRequest").where("id", "=", request.id);
  const guarded = last === null ? base.where("lastPolledAt", "is", null) : base.where("lastPolledAt", "=", last);
  const result = await guarded.set(tooSoon ? { lastPolledAt: now, interval: request.interval + 5 } : { lastPolledAt: now }).executeTakeFirst();
  // Another poll was recorded in between: this one is the second of two at once.
  return !tooSoon && Number(result.numUpdatedRows) === 1;
}

/** The approved request is redeemed once: true for the one token request that did it. */
export async function redeemRequest(db: Kysely<Database>, id: string): Promise<boolean> {
  const result = await db.updateTable("cibaRequest").set({ status: "redeemed" }).where("id", "=", id).where("status", "=", "approved").executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Deletes up to `limit` requests that expired before `cutoff`; answers how many went. */
export async function deleteExpiredRequests(db: Kysely<Database>, cutoff: Date, limit = 1000): Promise<number> {
  const expired = db.selectFrom("cibaRequest").select("id").where("expiresAt", "<", cutoff).limit(limit);
  const result = await db.deleteFrom("cibaRequest").where("id", "in", expired).executeTakeFirst();
  return Number(result.numDeletedRows);
}
