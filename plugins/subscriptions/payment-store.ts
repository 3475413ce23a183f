import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import { asDate } from "../../lib/db.js";

/** Every read and write of `subscriptionPayment`. */
export interface SubscriptionPayment {
  id: string;
  checkoutSessionId: string;
  userId: string;
  tier: string;
  interval: string | null;
  paymentIntentId: string | null;
  amountTotal: number | null;
  currency: string | null;
  paymentStatus: string;
  flag: "refunded" | "disputed" | null;
  flagDetail: string | null;
  flaggedAt: Date | null;
  createdAt: Date;
}

export type NewPayment = Omit<SubscriptionPayment, "id" | "flag" | "flagDetail" | "flaggedAt" | "createdAt">;

function toPayment(row: Record<string, any>): SubscriptionPayment {
  return {
    id: row.id,
    checkoutSessionId: row.checkoutSessionId,
    userId: row.userId,
    tier: row.tier,
    interval: row.interval ?? null,
    paymentIntentId: row.paymentIntentId ?? null,
    amountTotal: row.amountTotal == null ? null : Number(row.amountTotal),
    currency: row.currency ?? null,
    paymentStatus: row.paymentStatus,
    flag: row.flag ?? null,
    flagDetail: row.flagDetail ?? null,
    flaggedAt: row.flaggedAt ? asDate(row.flaggedAt) : null,
    createdAt: asDate(row.createdAt),
  };
}

export async function insertPayment(db: Kysely<any>, payment: NewPayment): Promise<SubscriptionPayment> {
  const now = new Date();
  const row = { id: randomUUID(), ...payment, createdAt: now, updatedAt: now };
  await db.insertInto("subscriptionPayment").values(row).execute();
  return toPayment(row);
}

export async function findPaymentByCheckoutSession(db: Kysely<any>, checkoutSessionId: string): Promise<SubscriptionPayment | null> {
  const row = await db.selectFrom("subscriptionPayment").selectAll().where("checkoutSessionId", "=", checkoutSessionId).executeTakeFirst();
  return row ? toPayment(row) : null;
}

export async function findPaymentByIntent(db: Kysely<any>, paymentIntentId: string): Promise<SubscriptionPayment | null> {
  const row = await db.selectFrom("subscriptionPayment").selectAll().where("paymentIntentId", "=", paymentIntentId).executeTakeFirst();
  return row ? toPayment(row) : null;
}

/** Marks a payment for manual handling; the first flag's time is kept, the detail is the latest. */
export async function flagPayment(db: Kysely<any>, id: string, flag: "refunded" | "disputed", detail: string): Promise<void> {
  const now = new Date();
  await db.updateTable("subscriptionPayment").set({ flag, flagDetail: detail, updatedAt: now }).where("id", "=", id).execute();
  await db.updateTable("subscriptionPayment").set({ flaggedAt: now }).where("id", "=", id).where("flaggedAt", "is", null).execute();
}
