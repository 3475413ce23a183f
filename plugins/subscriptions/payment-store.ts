import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import { rowReader } from "../../lib/db/sqlite-values.js";
import type { Database } from "../../lib/db/tables.js";

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
  subscriptionId: string | null;
  customerId: string | null;
  flag: "refunded" | "disputed" | null;
  flagDetail: string | null;
  flaggedAt: Date | null;
  createdAt: Date;
}

export type NewPayment = Omit<SubscriptionPayment, "id" | "flag" | "flagDetail" | "flaggedAt" | "createdAt">;

const readPayment = rowReader("subscriptionPayment", ["id", "checkoutSessionId", "userId", "tier", "interval", "paymentIntentId", "amountTotal", "currency", "paymentStatus", "subscriptionId", "customerId", "flag", "flagDetail", "flaggedAt", "createdAt"]);

/** `flag` is text in the table; this store writes it only from `SubscriptionPayment["flag"]` (flagPayment). */
function toPayment(row: Parameters<typeof readPayment>[0]): SubscriptionPayment {
  const payment = readPayment(row);
  return { ...payment, flag: payment.flag as SubscriptionPayment["flag"] };
}

export async function insertPayment(db: Kysely<Database>, payment: NewPayment): Promise<SubscriptionPayment> {
  const now = new Date();
  const row = { id: randomUUID(), ...payment, flag: null, flagDetail: null, flaggedAt: null, createdAt: now, updatedAt: now };
  await db.insertInto("subscriptionPayment").values(row).execute();
  return toPayment(row);
}

export async function findPaymentByCheckoutSession(db: Kysely<Database>, checkoutSessionId: string): Promise<SubscriptionPayment | null> {
  const row = await db.selectFrom("subscriptionPayment").selectAll().where("checkoutSessionId", "=", checkoutSessionId).executeTakeFirst();
  return row ? toPayment(row) : null;
}

export async function findPaymentByIntent(db: Kysely<Database>, paymentIntentId: string): Promise<SubscriptionPayment | null> {
  const row = await db.selectFrom("subscriptionPayment").selectAll().where("paymentIntentId", "=", paymentIntentId).executeTakeFirst();
  return row ? toPayment(row) : null;
}

/** Marks a payment for manual handling; the first flag's time is kept, the detail is the latest. */
export async function flagPayment(db: Kysely<Database>, id: string, flag: "refunded" | "disputed", detail: string): Promise<void> {
  const now = new Date();
  await db.updateTable("subscriptionPayment").set({ flag, flagDetail: detail, updatedAt: now }).where("id", "=", id).execute();
  await db.updateTable("subscriptionPayment").set({ flaggedAt: now }).where("id", "=", id).where("flaggedAt", "is", null).execute();
}

/** The payment that started a Stripe subscription (its Checkout), or null when it is not ours. */
export async function findPaymentBySubscription(db: Kysely<Database>, subscriptionId: string): Promise<SubscriptionPayment | null> {
  const row = await db.selectFrom("subscriptionPayment").selectAll().where("subscriptionId", "=", subscriptionId).orderBy("createdAt", "desc").executeTakeFirst();
  return row ? toPayment(row) : null;
}

/** A delayed payment method settled (`paid`) or failed after the Checkout completed. */
export async function setPaymentStatus(db: Kysely<Database>, id: string, paymentStatus: string): Promise<void> {
  await db.updateTable("subscriptionPayment").set({ paymentStatus, updatedAt: new Date() }).where("id", "=", id).execute();
}

/** The Stripe customer of the user's latest payment: whose billing the customer portal opens. */
export async function findCustomerOf(db: Kysely<Database>, userId: string): Promise<string | null> {
  const row = await db
    .selectFrom("subscriptionPayment")
    .select("customerId")
    .where("userId", "=", userId)
    .where("customerId", "is not", null)
    .orderBy("createdAt", "desc")
    .executeTakeFirst();
  return row?.customerId ?? null;
}
