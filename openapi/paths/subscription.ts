import { CheckoutBody } from "../../routes/subscription/subscription.js";
import { ref, record } from "../schemas.js";
import { BAD_INPUT, jsonBody, jsonResponse, problemResponses, PUBLIC, SESSION, UNAUTHORIZED, type Operation, type Paths } from "../components.js";

/** routes/subscription/subscription.ts: paid tiers (Stripe Checkout, webhook, status). */
const status: Operation = {
  tags: ["Subscription"],
  summary: "The signed-in user's tier and subscription",
  security: SESSION,
  responses: { 200: jsonResponse("Tier and subscription status.", ref("TierStatus")), ...problemResponses({ ...UNAUTHORIZED, 503: "The ownership index did not answer (Retry-After)." }) },
};

export const subscriptionPaths: Paths = {
  "/api/subscription/checkout": {
    post: {
      tags: ["Subscription"],
      summary: "Start a Stripe Checkout session for a paid tier",
      security: SESSION,
      requestBody: jsonBody(CheckoutBody),
      responses: {
        200: jsonResponse("The Checkout session's URL.", { type: "object", properties: { url: { type: "string", format: "uri" } }, required: ["url"] }),
        ...problemResponses({ ...BAD_INPUT, ...UNAUTHORIZED }),
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
      responses: { 200: jsonResponse("Event received.", record("Received (`duplicate` when the event was seen before).", { received: { type: "boolean", const: true }, duplicate: { type: "boolean", const: true } }, ["duplicate"])), ...problemResponses({ 400: "Bad signature or payload.", 503: "No webhook secret configured." }) },
    },
  },
  // The published Sigma client asks under {base_url}: the same handler.
  "/api/auth/subscription/status": { get: { ...status, operationId: "subscriptionStatusSigma" } },
};
