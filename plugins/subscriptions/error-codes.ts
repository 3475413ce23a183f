/** `code` members of the subscription routes' and client-limit answers. */
export const SUBSCRIPTION_ERROR_CODES = {
  /** checkout: Stripe is not configured on this server (STRIPE_SECRET_KEY). */
  PAYMENTS_NOT_CONFIGURED: "PAYMENTS_NOT_CONFIGURED",
  /** checkout: no Stripe price is configured for that tier and interval (spec, Errors 8: 400). */
  PRICE_NOT_CONFIGURED: "PRICE_NOT_CONFIGURED",
  /** webhook: STRIPE_WEBHOOK_SECRET is not set, so no event can be verified. */
  WEBHOOK_NOT_CONFIGURED: "WEBHOOK_NOT_CONFIGURED",
  /** webhook: the Stripe-Signature header is missing, wrong or too old. */
  INVALID_SIGNATURE: "INVALID_SIGNATURE",
  /** status: the NFT-ownership check failed and nothing verified earlier is at hand. */
  OWNERSHIP_UNAVAILABLE: "OWNERSHIP_UNAVAILABLE",
  /** create-client / register with a session: the tier's OAuth-client limit is reached. */
  CLIENT_LIMIT_REACHED: "CLIENT_LIMIT_REACHED",
} as const;
