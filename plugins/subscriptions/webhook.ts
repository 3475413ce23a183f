import type { Kysely } from "kysely";
import type Stripe from "stripe";
import { isUniqueViolation } from "../../lib/errors.js";
import type { Logger } from "../../lib/logger.js";
import { isEventProcessed, recordEvent } from "./event-store.js";
import { enqueueMint } from "./mint-job-store.js";
import { findPaymentByCheckoutSession, findPaymentByIntent, flagPayment, insertPayment } from "./payment-store.js";
import { INTERVALS, PAID_TIER_IDS, type PaidTierId } from "./tiers.js";
import type { Database } from "../../lib/db/tables.js";

/**
 * Spec, "Events": what each Stripe event does. Every event is applied at most once: its id is
 * recorded in the same transaction that applies it, so a redelivery (Stripe retries until it
 * gets a 2xx) changes nothing.
 */
export type WebhookOutcome = { duplicate: boolean; mintQueued: boolean };

const isPaidTier = (value: unknown): value is PaidTierId => typeof value === "string" && (PAID_TIER_IDS as readonly string[]).includes(value);
const idOf = (value: string | { id: string } | null | undefined) => (typeof value === "string" ? value : (value?.id ?? null));

export interface WebhookDeps {
  logger: Logger;
  /** Set when this instance has no minting service: queued mints record it as why they wait. */
  mintWaitReason: string | null;
}

export async function handleStripeEvent(db: Kysely<Database>, event: Stripe.Event, deps: WebhookDeps): Promise<WebhookOutcome> {
  if (await isEventProcessed(db, event.id)) return { duplicate: true, mintQueued: false };
  try {
    return await db.transaction().execute(async (trx) => {
      await recordEvent(trx, event.id, event.type);
      return { duplicate: false, mintQueued: await apply(trx, event, deps) };
    });
  } catch (err) {
    // The same event delivered twice at once: the other delivery recorded it first.
    if (isUniqueViolation(err)) return { duplicate: true, mintQueued: false };
    throw err;
  }
}

/** Applies one event; true when a mint was queued. */
async function apply(db: Kysely<Database>, event: Stripe.Event, deps: WebhookDeps): Promise<boolean> {
  const { logger } = deps;
  switch (event.type) {
    case "checkout.session.completed":
      return checkoutCompleted(db, event.data.object, deps);
    case "charge.refunded": {
      const charge = event.data.object;
      const detail = `charge ${charge.id} refunded ${charge.amount_refunded} of ${charge.amount} ${charge.currency} (event ${event.id})`;
      await flagForManualHandling(db, idOf(charge.payment_intent), "refunded", detail, logger);
      return false;
    }
    case "charge.dispute.created": {
      const dispute = event.data.object;
      const detail = `dispute ${dispute.id} on charge ${idOf(dispute.charge)}: ${dispute.reason}, ${dispute.amount} ${dispute.currency} (event ${event.id})`;
      await flagForManualHandling(db, idOf(dispute.payment_intent), "disputed", detail, logger);
      return false;
    }
    default:
      // Other event types the endpoint may be subscribed to: acknowledged, nothing to do.
      return false;
  }
}

/** Records the payment and, once paid, queues the tier NFT's mint to the buyer's wallet. */
async function checkoutCompleted(db: Kysely<Database>, session: Stripe.Checkout.Session, { logger, mintWaitReason }: WebhookDeps): Promise<boolean> {
  const userId = session.client_reference_id ?? session.metadata?.userId ?? null;
  const tier = session.metadata?.tier;
  if (!userId || !isPaidTier(tier)) {
    logger.warn("checkout completed without our user or tier; needs manual handling", { checkoutSessionId: session.id });
    return false;
  }
  if (await findPaymentByCheckoutSession(db, session.id)) return false;
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
  });
  // "unpaid" is a delayed payment method still under way: recorded, no NFT until it is paid.
  if (session.payment_status === "unpaid") {
    logger.warn("checkout completed unpaid; no mint queued", { paymentId: payment.id });
    return false;
  }
  await enqueueMint(db, { paymentId: payment.id, userId, tier }, mintWaitReason);
  logger.info("payment recorded; mint queued", { paymentId: payment.id, userId, tier });
  return true;
}

/** Spec, "Subscription (flow)": a refund or dispute only flags the record and is logged; nothing is revoked. */
async function flagForManualHandling(db: Kysely<Database>, paymentIntentId: string | null, flag: "refunded" | "disputed", detail: string, logger: Logger) {
  const payment = paymentIntentId ? await findPaymentByIntent(db, paymentIntentId) : null;
  if (!payment) {
    logger.warn(`${flag} payment not found among ours; needs manual handling`, { paymentIntentId, detail });
    return;
  }
  await flagPayment(db, payment.id, flag, detail);
  logger.warn(`payment ${flag}; needs manual handling`, { paymentId: payment.id, userId: payment.userId, detail });
}
