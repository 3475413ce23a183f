import type Stripe from "stripe";
import type { Config } from "../../lib/env.js";
import { problem, ProblemError } from "../../lib/errors.js";
import type { Logger } from "../../lib/logger.js";
import { PROBLEM_CODES } from "../../lib/problem-codes.js";
import { TIERS, type Interval, type PaidTierId } from "./tiers.js";
import type { Kysely } from "kysely";
import type { Database } from "../../lib/db/tables.js";
import { findCustomerOf } from "./payment-store.js";

/**
 * Starting a Stripe Checkout for a paid tier (spec, "Subscription"): the one implementation
 * behind POST /api/subscription/checkout and the account page's upgrade buttons. The Checkout
 * starts a Stripe subscription on the tier's recurring price (monthly or annual); each paid
 * invoice extends the period the tier NFT counts for. Stripe sends the buyer back to
 * /account?subscription=success, or =cancelled.
 */
export interface CheckoutDeps {
  /** null: STRIPE_SECRET_KEY is not set. */
  stripe: Stripe | null;
  settings: Config["stripe"];
  authUrl: string;
  db: Kysely<Database>;
  logger?: Logger;
}

/** Where the buyer pays (Stripe's hosted page) and the Checkout session's id; a problem (503, 400, 502) otherwise. */
export async function startCheckout(deps: CheckoutDeps, user: { id: string; email?: string | null }, tierId: PaidTierId, interval: Interval): Promise<{ url: string; sessionId: string }> {
  const { stripe, settings, authUrl, logger, db } = deps;
  if (!stripe) throw problem(PROBLEM_CODES.PAYMENTS_NOT_CONFIGURED);
  const price = settings.prices[tierId][interval];
  if (!price) throw problem(PROBLEM_CODES.PRICE_NOT_CONFIGURED, { detail: `No ${interval} price is configured for the ${TIERS[tierId].name} tier.` });
  const metadata = { userId: user.id, tier: tierId, interval };
  // A returning buyer keeps one Stripe customer, so the customer portal shows all their billing.
  const customer = await findCustomerOf(db, user.id);
  let session: Stripe.Checkout.Session;
  try {
    session = await stripe.checkout.sessions.create({
      mode: "subscription",
      line_items: [{ price, quantity: 1 }],
      // The webhook learns whose payment it is from these, never from anything the browser sends back.
      client_reference_id: user.id,
      metadata,
      subscription_data: { metadata },
      ...(customer ? { customer } : user.email ? { customer_email: user.email } : {}),
      success_url: `${authUrl}/account?subscription=success`,
      cancel_url: `${authUrl}/account?subscription=cancelled`,
    });
  } catch (err) {
    logger?.error("Stripe checkout session failed", { err, userId: user.id, tier: tierId });
    throw new ProblemError(502, "The payment processor could not start a checkout; try again shortly.");
  }
  if (!session.url) throw new ProblemError(502, "The payment processor returned no checkout address.");
  return { url: session.url, sessionId: session.id };
}
