import { Hono, type Context } from "hono";
import type { Kysely } from "kysely";
import Stripe from "stripe";
import * as v from "valibot";
import type { Config } from "../../lib/env.js";
import { problem, problems } from "../../lib/errors.js";
import type { Logger } from "../../lib/logger.js";
import { readJson } from "../../lib/validate.js";
import { PROBLEM_CODES } from "../../lib/problem-codes.js";
import { startCheckout } from "../../plugins/subscriptions/checkout.js";
import type { TierService } from "../../plugins/subscriptions/ownership.js";
import { openPortal } from "../../plugins/subscriptions/portal.js";
import { verifyWebhook } from "../../plugins/subscriptions/stripe.js";
import { INTERVALS, PAID_TIER_IDS } from "../../plugins/subscriptions/tiers.js";
import { handleStripeEvent } from "../../plugins/subscriptions/webhook.js";
import { signedIn, type RouteDeps, type RouteEnv } from "../middleware.js";
import type { Database } from "../../lib/db/tables.js";

/**
 * Spec, "Subscription": checkout (Stripe Checkout of a subscription), the customer portal, status (from NFT ownership and its period) and the
 * Stripe webhook (spec, "Events"). Errors 8: checkout answers 400 for a missing field, an
 * unknown tier, an invalid interval or a price that is not configured, 401 without a session.
 */
export interface SubscriptionDeps extends RouteDeps {
  db: Kysely<Database>;
  logger: Logger;
  authUrl: string;
  tiers: TierService;
  /** null: STRIPE_SECRET_KEY is not set. */
  stripe: Stripe | null;
  settings: Config["stripe"];
  /** Why queued mints wait on this instance (no minting service), or null. */
  mintWaitReason: string | null;
  /** Wakes the mint worker after a mint was queued. */
  onMintQueued: () => void;
}

type Ctx = Context<SubscriptionEnv>;

export const CheckoutBody = v.object({
  tierId: v.picklist(PAID_TIER_IDS, `must be one of ${PAID_TIER_IDS.join(", ")}`),
  interval: v.picklist(INTERVALS, `must be one of ${INTERVALS.join(", ")}`),
});

/** POST /api/subscription/checkout {tierId, interval} -> {url} of a Stripe Checkout session. */
async function createCheckout(c: Ctx) {
  const { value: body } = await readJson(c, CheckoutBody);
  return c.json(await startCheckout(c.var.deps, c.var.session.user, body.tierId, body.interval));
}

/** POST /api/subscription/portal -> {url} of a Stripe customer portal session (cancel, change plan or card). */
async function createPortal(c: Ctx) {
  return c.json(await openPortal(c.var.deps, c.var.session.user.id));
}

/** GET /api/subscription/status (also {base_url}/subscription/status for the published client). */
async function subscriptionStatus(c: Ctx) {
  return c.json(await c.var.deps.tiers.status(c.var.session.user.id));
}

/**
 * POST /api/subscription/webhook, called by Stripe only. The signature is checked over the raw
 * bytes before anything is parsed; unsigned, wrongly signed and stale events get 400 (Stripe
 * shows it and retries), a handled or redelivered one 200.
 */
async function receiveWebhook(c: Ctx) {
  const { db, settings, logger, mintWaitReason, onMintQueued, stripe, tiers } = c.var.deps;
  if (!settings.webhookSecret) throw problem(PROBLEM_CODES.WEBHOOK_NOT_CONFIGURED);
  const signature = c.req.header("stripe-signature");
  if (!signature) throw invalidSignature("The Stripe-Signature header is missing.");
  const raw = await c.req.text();
  let event: Stripe.Event;
  try {
    event = verifyWebhook(raw, signature, settings.webhookSecret);
  } catch (err) {
    if (err instanceof Stripe.errors.StripeSignatureVerificationError) throw invalidSignature("The Stripe-Signature does not match this body, or its timestamp is too old.");
    throw problems.badRequest("The webhook body is not a Stripe event.");
  }
  const outcome = await handleStripeEvent(db, event, { logger, mintWaitReason, stripe, prices: settings.prices });
  if (outcome.mintQueued) onMintQueued();
  // The buyer's next answer is checked afresh (another holder of the NFT sees the change within the tier cache's time).
  for (const userId of outcome.users) tiers.forget(userId);
  return c.json({ received: true, ...(outcome.duplicate ? { duplicate: true } : {}) });
}

const invalidSignature = (detail: string) => problem(PROBLEM_CODES.INVALID_SIGNATURE, { detail });

type SubscriptionEnv = RouteEnv<SubscriptionDeps>;

/** Largest webhook body read: Stripe events are a few KiB; checkout's body is tiny (the family's limit, app.ts). */
export const SUBSCRIPTION_MAX_BODY_BYTES = 256 * 1024;

/** The subscription family (app.ts): /api/subscription, no-store. */
export const subscriptionRoutes = new Hono<SubscriptionEnv>()
  .post("/checkout", signedIn, createCheckout)
  .post("/portal", signedIn, createPortal)
  .get("/status", signedIn, subscriptionStatus)
  .post("/webhook", receiveWebhook);

/** The same status handler, for its second mount at {base_url}/subscription/status. */
export const subscriptionStatusRoutes = new Hono<SubscriptionEnv>().get("/", signedIn, subscriptionStatus);
