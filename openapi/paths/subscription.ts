import { CheckoutBody } from "../../routes/subscription/subscription.js";
import { ref, record } from "../schemas.js";
import { BAD_INPUT, jsonBody, jsonResponse, problemResponses, PUBLIC, SESSION, UNAUTHORIZED, type Operation, type Paths } from "../components.js";

/** routes/subscription/subscription.ts: paid tiers (Stripe subscriptions, customer portal, webhook, status). */
const URL_ANSWER = (description: string, extra: Record<string, unknown> = {}) =>
  jsonResponse(description, { type: "object", properties: { url: { type: "string", format: "uri" }, ...extra }, required: ["url"] });

const status: Operation = {
  tags: ["Subscription"],
  summary: "The signed-in user's tier and subscription",
  description: "The tier of the tier NFT the user's connected wallets hold while its paid period is current; free otherwise.",
  security: SESSION,
  responses: { 200: jsonResponse("Tier and subscription status.", ref("TierStatus")), ...problemResponses({ ...UNAUTHORIZED, 503: "NFT ownership could not be checked and nothing was verified before (Retry-After)." }) },
};

export const subscriptionPaths: Paths = {
  "/api/subscription/checkout": {
    post: {
      tags: ["Subscription"],
      summary: "Start a Stripe Checkout session for a paid tier",
      description: "A subscription (mode: subscription) on the tier's recurring monthly or annual price.",
      security: SESSION,
      requestBody: jsonBody(CheckoutBody),
      responses: {
        200: URL_ANSWER("The Checkout session's URL and id.", { sessionId: { type: "string" } }),
        ...problemResponses({ ...BAD_INPUT, ...UNAUTHORIZED, 502: "Stripe refused the checkout.", 503: "Payments are not configured." }),
      },
    },
  },
  "/api/subscription/portal": {
    post: {
      tags: ["Subscription"],
      summary: "Open Stripe's customer portal to cancel or change the subscription",
      description: "A Stripe customer portal session for the signed-in user's Stripe customer, returning to /account/plan#billing.",
      security: SESSION,
      responses: {
        200: URL_ANSWER("The portal session's URL."),
        ...problemResponses({ ...UNAUTHORIZED, 404: "No billing account: the user never paid here (NO_BILLING_ACCOUNT).", 502: "Stripe refused the portal session.", 503: "Payments are not configured." }),
      },
    },
  },
  "/api/subscription/status": { get: status },
  "/api/subscription/webhook": {
    post: {
      tags: ["Subscription"],
      summary: "Stripe webhook (signed with the Stripe-Signature header)",
      security: PUBLIC,
      parameters: [{ name: "Stripe-Signature", in: "header", required: true, schema: { type: "string" } }],
      requestBody: { required: true, content: { "application/json": { schema: { type: "object" } } } },
      responses: { 200: jsonResponse("Event received.", record("Received (`duplicate` when the event was seen before).", { received: { type: "boolean", const: true }, duplicate: { type: "boolean", const: true } }, ["duplicate"])), ...problemResponses({ 400: "Bad signature or payload.", 503: "No webhook secret configured, or Stripe could not be asked about the event's subscription (it redelivers)." }) },
    },
  },
  // The published Sigma client asks under {base_url}: the same handler.
  "/api/auth/subscription/status": { get: { ...status, operationId: "subscriptionStatusSigma" } },
};
