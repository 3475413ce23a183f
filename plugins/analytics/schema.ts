import type { BetterAuthPluginDBSchema } from "@better-auth/core/db";

/**
 * Per-client analytics (Pro), one row per UTC day. Each row's `id` is its natural key, so a
 * flush (./flush.ts) is one upsert per row and several instances add their counts up:
 *   - `clientDailyCount`: id `day|clientId|metric|key`, `count` added to on conflict
 *     (metric `authorization`, `token` by grant type, `refusal` by error code);
 *   - `clientDailyUser`: id `day|clientId|userId`, inserted or ignored, so the people who
 *     signed in to a client on a day are counted exactly (a set, not an estimate).
 * No foreign keys: the counts outlive a lapsed tier (kept for a return) and a deleted user.
 */
export const analyticsSchema = {
  clientDailyCount: {
    fields: {
      /** The UTC day, `YYYY-MM-DD`. */
      day: { type: "string", required: true },
      /** The client's public client_id. */
      clientId: { type: "string", required: true, index: true },
      metric: { type: "string", required: true },
      /** The grant type of a token, the error code of a refusal, "" for an authorization. */
      key: { type: "string", required: true },
      count: { type: "number", required: true },
    },
  },
  clientDailyUser: {
    fields: {
      day: { type: "string", required: true },
      clientId: { type: "string", required: true, index: true },
      userId: { type: "string", required: true },
    },
  },
} satisfies BetterAuthPluginDBSchema;
