import type { BetterAuthPlugin } from "better-auth";
import { createAuthMiddleware } from "better-auth/api";
import { isJsonObject } from "../../lib/json.js";
import { hookOn } from "../hooks.js";
import { clientLimitHook } from "./client-limit.js";
import { SUBSCRIPTION_ERROR_CODES } from "./error-codes.js";
import type { TierService } from "./ownership.js";
import { subscriptionSchema } from "./schema.js";
import { isTierId } from "./tiers.js";
import { AUTH_PATHS } from "../../lib/auth-endpoints.js";

/** The tier a user's recorded `subscriptionTier` stands for ("free" when it names none). */
export function currentTierOf(recorded: unknown): string {
  return isTierId(recorded) ? recorded : "free";
}

/**
 * The session object answers the user's current tier, even when it changed after sign-in: a
 * get-session answer with the session's tier set from the user's, or null when it already says so.
 */
export function withCurrentTier(returned: unknown): Record<string, unknown> | null {
  if (!isJsonObject(returned) || !isJsonObject(returned.session) || !isJsonObject(returned.user)) return null;
  const tier = currentTierOf(returned.user.subscriptionTier);
  if (returned.session.subscriptionTier === tier) return null;
  return { ...returned, session: { ...returned.session, subscriptionTier: tier } };
}

const sessionShowsCurrentTier = hookOn(
  AUTH_PATHS.getSession,
  createAuthMiddleware(async (ctx) => {
    const current = withCurrentTier(ctx.context.returned);
    if (current) return ctx.json(current);
  }),
);

/**
 * Paid tiers inside better-auth: the tables (./schema.ts), `subscriptionTier` on the session,
 * and the tier's limit on OAuth clients. Checkout, webhook and status are Hono routes
 * (routes/subscription/subscription.ts); the mint queue runs in ./worker.ts.
 */
export function subscriptions(options: { tiers: TierService }) {
  const { tiers } = options;
  return {
    id: "subscriptions",
    schema: subscriptionSchema,
    $ERROR_CODES: SUBSCRIPTION_ERROR_CODES,
    init(ctx) {
      // Tier changes go through better-auth, so the user cached in sessions (Redis) follows.
      tiers.bindWriter(async (userId, tier) => {
        await ctx.internalAdapter.updateUser(userId, { subscriptionTier: tier });
      });
      return {
        options: {
          databaseHooks: {
            session: {
              create: {
                // Spec, Session: subscriptionTier, the user's tier when the session began. Read
                // through better-auth's adapter: within the request it is the read the sign-in
                // and the other session hooks share (plugins/core-store/request-reads.ts).
                before: async (session, hookCtx) => {
                  const adapter = hookCtx?.context.internalAdapter ?? ctx.internalAdapter;
                  const recorded = ((await adapter.findUserById(session.userId)) as { subscriptionTier?: unknown } | null)?.subscriptionTier;
                  return { data: { ...session, subscriptionTier: isTierId(recorded) ? recorded : "free" } };
                },
              },
            },
          },
        },
      };
    },
    hooks: {
      before: [clientLimitHook(tiers)],
      after: [sessionShowsCurrentTier],
    },
  } satisfies BetterAuthPlugin;
}
