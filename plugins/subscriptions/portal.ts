import type { Kysely } from "kysely";
import type Stripe from "stripe";
import type { Database } from "../../lib/db/tables.js";
import { problem, ProblemError } from "../../lib/errors.js";
import type { Logger } from "../../lib/logger.js";
import { PROBLEM_CODES } from "../../lib/problem-codes.js";
import { findCustomerOf } from "./payment-store.js";

/**
 * Stripe's customer portal (spec, "Subscription"): where a buyer cancels, changes the interval
 * or the card of their subscription. The one implementation behind POST /api/subscription/portal
 * and the account page's "Manage billing" button. What the portal allows is set in Stripe's
 * dashboard; what it changes comes back as webhook events.
 */
export interface PortalDeps {
  /** null: STRIPE_SECRET_KEY is not set. */
  stripe: Stripe | null;
  db: Kysely<Database>;
  authUrl: string;
  logger?: Logger;
}

/** A portal session for the user's Stripe customer, returning to the account page; a problem (503, 404, 502) otherwise. */
export async function openPortal(deps: PortalDeps, userId: string): Promise<{ url: string }> {
  const { stripe, db, authUrl, logger } = deps;
  if (!stripe) throw problem(PROBLEM_CODES.PAYMENTS_NOT_CONFIGURED);
  const customer = await findCustomerOf(db, userId);
  if (!customer) throw problem(PROBLEM_CODES.NO_BILLING_ACCOUNT);
  let session: Stripe.BillingPortal.Session;
  try {
    session = await stripe.billingPortal.sessions.create({ customer, return_url: `${authUrl}/account/plan#billing` });
  } catch (err) {
    logger?.error("Stripe customer portal session failed", { err, userId });
    throw new ProblemError(502, "The payment processor could not open the billing portal; try again shortly.");
  }
  return { url: session.url };
}
