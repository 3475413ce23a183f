import Stripe from "stripe";
import type { Config } from "../../lib/env.js";

/**
 * The official Stripe SDK, built once from the settings; null without STRIPE_SECRET_KEY.
 * STRIPE_API_BASE_URL points it elsewhere (the SDK's host/port/protocol options), which is how
 * the tests run it against a local stand-in. Retries with Stripe's idempotency keys are the SDK's.
 */
export function createStripe(settings: Config["stripe"]): Stripe | null {
  if (!settings.secretKey) return null;
  return new Stripe(settings.secretKey, { maxNetworkRetries: 2, timeout: 10_000, telemetry: false, ...settings.api });
}

/** Stripe's own tolerance for a signature's timestamp (seconds): older events are refused as replays. */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

/**
 * Verifies the Stripe-Signature header over the exact raw body (HMAC-SHA256 with the endpoint's
 * secret, timestamp within the tolerance) and parses the event; throws
 * Stripe.errors.StripeSignatureVerificationError otherwise.
 */
export function verifyWebhook(rawBody: string, signature: string, secret: string): Stripe.Event {
  return Stripe.webhooks.constructEvent(rawBody, signature, secret, WEBHOOK_TOLERANCE_SECONDS);
}
