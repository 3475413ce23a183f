import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import { rowReader } from "../../lib/db.js";

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

const toPayment = rowReader<SubscriptionPayment>({ id: "text", checkoutSessionId: "text", userId: "text", tier: "text", interval: "text?", paymentIntentId: "text?", amountTotal: "int?", currency: "text?", paymentStatus: "text", flag: "text?", flagDetail: "text?", flaggedAt: "date?", createdAt: "date" });

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
