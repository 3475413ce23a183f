import type { BetterAuthPluginDBSchema } from "@better-auth/core/db";

/**
 * Paid tiers (spec, "Subscription" and "Events"): the tier on the session, what Stripe told us
 * (each event once), the payments it reported, and the durable queue of NFT mints.
 * `user.subscriptionTier` itself is declared with the other User fields (plugins/identity).
 */
export const subscriptionSchema = {
  session: {
    fields: {
      /** Spec, Session: the user's tier when the session was made; answers carry the current one. */
      subscriptionTier: { type: "string", required: false, defaultValue: "free", input: false },
    },
  },
  /** Stripe event ids already handled: a redelivered event changes nothing. */
  stripeEvent: {
    fields: {
      eventId: { type: "string", required: true, unique: true },
      type: { type: "string", required: true },
      createdAt: { type: "date", required: true },
    },
  },
  /** One completed Stripe Checkout session; refunds and disputes flag it for manual handling. */
  subscriptionPayment: {
    fields: {
      checkoutSessionId: { type: "string", required: true, unique: true },
      /** Kept when the account is deleted: a payment record is the merchant's, not the user's. */
      userId: { type: "string", required: true, index: true },
      tier: { type: "string", required: true },
      interval: { type: "string", required: false },
      paymentIntentId: { type: "string", required: false, index: true },
      amountTotal: { type: "number", required: false },
      currency: { type: "string", required: false },
      paymentStatus: { type: "string", required: true },
      /** The Stripe subscription a subscription-mode Checkout started: its invoices extend the period. */
      subscriptionId: { type: "string", required: false, index: true },
      /** The buyer's Stripe customer: whose billing the customer portal opens. */
      customerId: { type: "string", required: false },
      /** `refunded` or `disputed`: someone must look at it; nothing is undone automatically. */
      flag: { type: "string", required: false },
      flagDetail: { type: "string", required: false },
      flaggedAt: { type: "date", required: false },
      createdAt: { type: "date", required: true },
      updatedAt: { type: "date", required: true },
    },
  },
  /** Minting the tier NFT for a payment, retried with backoff by the worker (./worker.ts). */
  mintJob: {
    fields: {
      paymentId: { type: "string", required: true, unique: true },
      userId: { type: "string", required: true, index: true },
      tier: { type: "string", required: true },
      /** pending | running | done | failed */
      status: { type: "string", required: true, index: true },
      attempts: { type: "number", required: true, defaultValue: 0 },
      nextAttemptAt: { type: "date", required: true },
      /** A running job whose worker vanished is taken up again after this. */
      lockedUntil: { type: "date", required: false },
      /** Why the last attempt failed, or why the job is waiting (no wallet, no minting service). */
      lastError: { type: "string", required: false },
      walletAddress: { type: "string", required: false },
      nftOrigin: { type: "string", required: false },
      /**
       * The end of the period paid for (a month or a year; `invoice.paid` moves it on). The tier
       * NFT counts while it is held and this is in the future; it stays with the NFT, so a holder
       * after a transfer holds what is left of it. Null: no period recorded, the NFT counts for nobody.
       */
      periodEnd: { type: "date", required: false },
      /** Stripe's status of the subscription behind it (active, past_due, canceled, ...), as last reported. */
      subscriptionStatus: { type: "string", required: false },
      /** The subscription ends at `periodEnd` (cancelled in the customer portal): no renewal follows. */
      cancelAtPeriodEnd: { type: "boolean", required: false },
      completedAt: { type: "date", required: false },
      createdAt: { type: "date", required: true },
      updatedAt: { type: "date", required: true },
    },
    /** The minted NFT's origin makes an ordinal one of our tier NFTs (./wallets.ts): tier checks look jobs up by it. */
    indexes: [{ name: "mintJob_nftOrigin_idx", fields: ["nftOrigin"] }],
  },
} satisfies BetterAuthPluginDBSchema;
