import type { Kysely } from "kysely";
import type Stripe from "stripe";
import { isUniqueViolation, ProblemError } from "../../lib/errors.js";
import type { Logger } from "../../lib/logger.js";
import { isEventProcessed, recordEvent } from "./event-store.js";
import { enqueueMint, findMintJobByPayment, updatePeriod, type Period } from "./mint-job-store.js";
import { findPaymentByCheckoutSession, findPaymentByIntent, findPaymentBySubscription, flagPayment, insertPayment, setPaymentStatus, type SubscriptionPayment } from "./payment-store.js";
import { INTERVALS, PAID_TIER_IDS, type PaidTierId } from "./tiers.js";
import type { Database } from "../../lib/db/tables.js";
import type { Config } from "../../lib/env.js";

/**
 * Spec, "Events": what each Stripe event does. Every event is applied at most once: its id is
 * recorded in the same transaction that applies it, so a redelivery (Stripe retries until it
 * gets a 2xx) changes nothing.
 *
 * A purchase is a Stripe subscription (a month or a year, checkout.ts). Its first payment
 * mints the tier NFT with the period paid for; `invoice.paid` moves the period on; a failed
 * payment, a cancellation (`customer.subscription.updated`) or the subscription's end
 * (`customer.subscription.deleted`) only stop it from moving on, so the tier ends when the
 * period paid for does. The period lives on the NFT's mint job, whoever holds the NFT now.
 */
export type WebhookOutcome = {
  duplicate: boolean;
  mintQueued: boolean;
  /** The buyers whose tier may have changed: their cached tier answers are stale. */
  users: string[];
};
type Effect = Omit<WebhookOutcome, "duplicate">;
const NOTHING: Effect = { mintQueued: false, users: [] };

const isPaidTier = (value: unknown): value is PaidTierId => typeof value === "string" && (PAID_TIER_IDS as readonly string[]).includes(value);
const idOf = (value: string | { id: string } | null | undefined) => (typeof value === "string" ? value : (value?.id ?? null));
const fromUnix = (seconds: number) => new Date(seconds * 1000);

export interface WebhookDeps {
  logger: Logger;
  /** Set when this instance has no minting service: queued mints record it as why they wait. */
  mintWaitReason: string | null;
  /** The Stripe SDK, to read a new subscription's period; null: STRIPE_SECRET_KEY is not set. */
  stripe: Stripe | null;
  /** The configured prices (STRIPE_PRICE_*): which tier and interval a subscription's price is. */
  prices: Config["stripe"]["prices"];
}

export async function handleStripeEvent(db: Kysely<Database>, event: Stripe.Event, deps: WebhookDeps): Promise<WebhookOutcome> {
  if (await isEventProcessed(db, event.id)) return { duplicate: true, ...NOTHING };
  // Calls to Stripe come first, outside the transaction; when they fail the event is not recorded and Stripe retries.
  const period = await periodForCheckout(event, deps);
  try {
    return await db.transaction().execute(async (trx) => {
      await recordEvent(trx, event.id, event.type);
      return { duplicate: false, ...(await apply(trx, event, deps, period)) };
    });
  } catch (err) {
    // The same event delivered twice at once: the other delivery recorded it first.
    if (isUniqueViolation(err)) return { duplicate: true, ...NOTHING };
    throw err;
  }
}

/** Applies one event. */
async function apply(db: Kysely<Database>, event: Stripe.Event, deps: WebhookDeps, period: Period | null): Promise<Effect> {
  const { logger } = deps;
  switch (event.type) {
    case "checkout.session.completed":
      return checkoutCompleted(db, event.data.object, deps, period);
    case "checkout.session.async_payment_succeeded":
    case "checkout.session.async_payment_failed":
      return asyncPaymentSettled(db, event.data.object, event.type === "checkout.session.async_payment_succeeded", deps, period);
    case "invoice.paid":
      return invoicePaid(db, event.data.object, logger);
    case "invoice.payment_failed": {
      const invoice = event.data.object;
      return subscriptionChanged(db, subscriptionOfInvoice(invoice), { subscriptionStatus: "past_due" }, logger, `invoice ${invoice.id} payment failed`);
    }
    case "customer.subscription.updated":
    case "customer.subscription.deleted": {
      const sub = event.data.object;
      const ended = event.type === "customer.subscription.deleted";
      if (!ended) {
        const changed = await planChanged(db, sub, event.id, deps);
        if (changed) return changed;
      }
      const change = { subscriptionStatus: ended ? "canceled" : sub.status, cancelAtPeriodEnd: ended || cancels(sub) };
      return subscriptionChanged(db, sub.id, change, logger, ended ? "subscription ended" : `subscription ${sub.status}${change.cancelAtPeriodEnd ? ", cancelled at period end" : ""}`);
    }
    case "charge.refunded": {
      const charge = event.data.object;
      const detail = `charge ${charge.id} refunded ${charge.amount_refunded} of ${charge.amount} ${charge.currency} (event ${event.id})`;
      await flagForManualHandling(db, idOf(charge.payment_intent), "refunded", detail, logger);
      return NOTHING;
    }
    case "charge.dispute.created": {
      const dispute = event.data.object;
      const detail = `dispute ${dispute.id} on charge ${idOf(dispute.charge)}: ${dispute.reason}, ${dispute.amount} ${dispute.currency} (event ${event.id})`;
      await flagForManualHandling(db, idOf(dispute.payment_intent), "disputed", detail, logger);
      return NOTHING;
    }
    default:
      // Other event types the endpoint may be subscribed to: acknowledged, nothing to do.
      return NOTHING;
  }
}

const cancels = (sub: Stripe.Subscription) => sub.cancel_at_period_end || Boolean(sub.cancel_at);

/** The period a subscription is paid up to: its items' current period end (older API versions: the subscription's). */
function periodOfSubscription(sub: Stripe.Subscription): Period {
  const ends = (sub.items?.data ?? []).map((item) => item.current_period_end).filter((end) => typeof end === "number");
  const legacy = (sub as unknown as { current_period_end?: number }).current_period_end;
  const end = ends.length ? Math.max(...ends) : (legacy ?? Math.floor(Date.now() / 1000));
  return { periodEnd: fromUnix(end), subscriptionStatus: sub.status, cancelAtPeriodEnd: cancels(sub) };
}

/** One month or one year from now: the period of a one-time payment (a Checkout in `payment` mode, from before subscriptions). */
function oneTimePeriod(interval: string | undefined): Period {
  const end = new Date();
  if (interval === "annual") end.setUTCFullYear(end.getUTCFullYear() + 1);
  else end.setUTCMonth(end.getUTCMonth() + 1);
  return { periodEnd: end, subscriptionStatus: null, cancelAtPeriodEnd: true };
}

/** For a Checkout that may queue a mint: the period it paid for, read from Stripe's subscription. */
async function periodForCheckout(event: Stripe.Event, { stripe, logger }: WebhookDeps): Promise<Period | null> {
  if (event.type !== "checkout.session.completed" && event.type !== "checkout.session.async_payment_succeeded") return null;
  const session = event.data.object;
  if (session.mode !== "subscription" || !session.subscription) return oneTimePeriod(session.metadata?.interval);
  if (typeof session.subscription === "object") return periodOfSubscription(session.subscription);
  if (!stripe) {
    logger.warn("subscription checkout without STRIPE_SECRET_KEY: its period is taken from its interval", { checkoutSessionId: session.id });
    return { ...oneTimePeriod(session.metadata?.interval), subscriptionStatus: "active", cancelAtPeriodEnd: false };
  }
  try {
    return periodOfSubscription(await stripe.subscriptions.retrieve(session.subscription));
  } catch (err) {
    logger.error("could not read the subscription of a completed checkout; Stripe will redeliver", { err, checkoutSessionId: session.id });
    throw new ProblemError(503, "The payment processor could not be asked about this subscription; deliver the event again later.", { headers: { "retry-after": "60" } });
  }
}

/** Records the payment and, once paid, queues the tier NFT's mint to the buyer's wallet with the period paid for. */
async function checkoutCompleted(db: Kysely<Database>, session: Stripe.Checkout.Session, { logger, mintWaitReason }: WebhookDeps, period: Period | null): Promise<Effect> {
  const userId = session.client_reference_id ?? session.metadata?.userId ?? null;
  const tier = session.metadata?.tier;
  if (!userId || !isPaidTier(tier)) {
    logger.warn("checkout completed without our user or tier; needs manual handling", { checkoutSessionId: session.id });
    return NOTHING;
  }
  if (await findPaymentByCheckoutSession(db, session.id)) return NOTHING;
  const interval = session.metadata?.interval;
  const payment = await insertPayment(db, {
    checkoutSessionId: session.id,
    userId,
    tier,
    interval: (INTERVALS as readonly string[]).includes(interval ?? "") ? interval! : null,
    paymentIntentId: idOf(session.payment_intent),
    amountTotal: session.amount_total,
    currency: session.currency,
    paymentStatus: session.payment_status,
    subscriptionId: idOf(session.subscription),
    customerId: idOf(session.customer),
  });
  // "unpaid" is a delayed payment method still under way: recorded, no NFT until it is paid.
  if (session.payment_status === "unpaid") {
    logger.warn("checkout completed unpaid; no mint queued", { paymentId: payment.id });
    return NOTHING;
  }
  return queueMint(db, payment, period ?? oneTimePeriod(interval), mintWaitReason, logger);
}

async function queueMint(db: Kysely<Database>, payment: SubscriptionPayment, period: Period, mintWaitReason: string | null, logger: Logger): Promise<Effect> {
  await enqueueMint(db, { paymentId: payment.id, userId: payment.userId, tier: payment.tier }, period, mintWaitReason);
  logger.info("payment recorded; mint queued", { paymentId: payment.id, userId: payment.userId, tier: payment.tier, periodEnd: period.periodEnd.toISOString() });
  return { mintQueued: true, users: [payment.userId] };
}

/** A delayed payment method (a bank debit) settled after the Checkout completed unpaid: mint now, or record that it failed. */
async function asyncPaymentSettled(db: Kysely<Database>, session: Stripe.Checkout.Session, succeeded: boolean, deps: WebhookDeps, period: Period | null): Promise<Effect> {
  const payment = await findPaymentByCheckoutSession(db, session.id);
  // Stripe does not promise order: settled before we saw it completed.
  if (!payment) return checkoutCompleted(db, { ...session, payment_status: succeeded ? "paid" : "unpaid" }, deps, period);
  if (!succeeded) {
    await setPaymentStatus(db, payment.id, "failed");
    deps.logger.warn("delayed checkout payment failed; no mint queued", { paymentId: payment.id, userId: payment.userId });
    return NOTHING;
  }
  await setPaymentStatus(db, payment.id, "paid");
  if (await findMintJobByPayment(db, payment.id)) return NOTHING;
  return queueMint(db, payment, period ?? oneTimePeriod(payment.interval ?? undefined), deps.mintWaitReason, deps.logger);
}

/** The subscription an invoice bills (API versions since 2025: under `parent`; before: `subscription`). */
function subscriptionOfInvoice(invoice: Stripe.Invoice): string | null {
  const legacy = (invoice as unknown as { subscription?: string | { id: string } | null }).subscription;
  return idOf(invoice.parent?.subscription_details?.subscription ?? legacy);
}

/** A paid invoice of one of our subscriptions: the NFT's period runs on to the end of what it paid for. */
async function invoicePaid(db: Kysely<Database>, invoice: Stripe.Invoice, logger: Logger): Promise<Effect> {
  const ends = (invoice.lines?.data ?? []).map((line) => line.period?.end).filter((end) => typeof end === "number");
  if (!ends.length) {
    logger.warn("paid invoice without a billed period; nothing extended", { invoiceId: invoice.id });
    return NOTHING;
  }
  return subscriptionChanged(db, subscriptionOfInvoice(invoice), { periodEnd: fromUnix(Math.max(...ends)), subscriptionStatus: "active" }, logger, `invoice ${invoice.id} paid`);
}

/**
 * What Stripe reported about one of our subscriptions, written to its NFT's record. An event
 * for a subscription we did not start, or whose first payment has not reached us (the
 * Checkout's completion reads the subscription itself), is acknowledged and changes nothing.
 */
async function subscriptionChanged(db: Kysely<Database>, subscriptionId: string | null, change: Partial<Period>, logger: Logger, what: string): Promise<Effect> {
  const payment = subscriptionId ? await findPaymentBySubscription(db, subscriptionId) : null;
  if (!payment) {
    logger.info(`${what}: not a subscription with a payment of ours (yet); nothing to do`, { subscriptionId });
    return NOTHING;
  }
  const changed = await updatePeriod(db, payment.id, change);
  const periodEnd = change.periodEnd?.toISOString();
  const fields = { paymentId: payment.id, userId: payment.userId, subscriptionId, changed, ...(periodEnd ? { periodEnd } : {}) };
  if (change.subscriptionStatus === "past_due") logger.warn(`${what}; the tier ends with its period unless a retry succeeds`, fields);
  else logger.info(what, fields);
  return { mintQueued: false, users: [payment.userId] };
}

/** The tier and interval a configured price id is for, or null. */
function tierOfPrice(prices: Config["stripe"]["prices"], price: string | undefined): { tier: PaidTierId; interval: string } | null {
  for (const tier of PAID_TIER_IDS) for (const interval of INTERVALS) if (price && prices[tier][interval] === price) return { tier, interval };
  return null;
}

/**
 * A subscription moved to another tier's price (in the customer portal): the NFT of the tier
 * it had keeps the period already paid and no longer renews; an NFT of the new tier is queued
 * with the subscription's current period, and from now on the subscription's invoices extend
 * that one (the latest payment of a subscription is the one its events apply to). Null when
 * the tier did not change (same tier, another interval or card: the usual update).
 */
async function planChanged(db: Kysely<Database>, sub: Stripe.Subscription, eventId: string, deps: WebhookDeps): Promise<Effect | null> {
  const payment = await findPaymentBySubscription(db, sub.id);
  const now = tierOfPrice(deps.prices, sub.items?.data?.[0]?.price?.id);
  if (!payment || !now || now.tier === payment.tier || !["active", "trialing"].includes(sub.status)) return null;
  await updatePeriod(db, payment.id, { subscriptionStatus: "replaced", cancelAtPeriodEnd: true });
  const next = await insertPayment(db, {
    // No Checkout is behind a plan change: the record is keyed by the subscription and the event.
    checkoutSessionId: `${sub.id}/${eventId}`,
    userId: payment.userId,
    tier: now.tier,
    interval: now.interval,
    paymentIntentId: null,
    amountTotal: null,
    currency: null,
    paymentStatus: "paid",
    subscriptionId: sub.id,
    customerId: idOf(sub.customer),
  });
  deps.logger.info("subscription moved to another tier", { subscriptionId: sub.id, from: payment.tier, to: now.tier, userId: payment.userId });
  return queueMint(db, next, periodOfSubscription(sub), deps.mintWaitReason, deps.logger);
}

/** Spec, "Subscription (flow)": a refund or dispute only flags the record and is logged; nothing is revoked. */
async function flagForManualHandling(db: Kysely<Database>, paymentIntentId: string | null, flag: "refunded" | "disputed", detail: string, logger: Logger) {
  const payment = paymentIntentId ? await findPaymentByIntent(db, paymentIntentId) : null;
  if (!payment) {
    logger.warn(`${flag} payment not found among ours; needs manual handling`, { paymentIntentId, detail });
    return;
  }
  await flagPayment(db, payment.id, flag, detail);
  logger.warn(`${flag} payment needs manual handling`, { paymentId: payment.id, userId: payment.userId, detail });
}
