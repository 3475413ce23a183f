import { APIError, createAuthMiddleware, getSessionFromCtx } from "better-auth/api";
import { countOwnedClients } from "../oauth-store/adapter.js";
import { SUBSCRIPTION_ERROR_CODES as CODES } from "./error-codes.js";
import type { TierService } from "./ownership.js";
import { TIERS } from "./tiers.js";
import { AUTH_PATHS } from "../../lib/auth-endpoints.js";

/** The routes that create a client a user owns (RFC 7591 registration with a session, and create-client). */
const CLIENT_CREATES = new Set([AUTH_PATHS.register, "/oauth2/create-client"]);

type HookContext = Parameters<Parameters<typeof createAuthMiddleware>[0]>[0];

/**
 * The signed-in user behind the request, as the endpoint will see it. Before hooks do not see
 * each other's changes, so a session token sent as a bearer (which the bearer plugin turns into
 * a cookie for the endpoint) is looked up here too.
 */
async function callerId(ctx: HookContext): Promise<string | null> {
  const session = await getSessionFromCtx(ctx).catch(() => null);
  if (session) return session.user.id;
  const header = ctx.headers?.get("authorization") ?? "";
  if (!/^bearer /i.test(header)) return null;
  let token = header.slice(7).trim();
  try {
    token = decodeURIComponent(token);
  } catch {
    return null;
  }
  const found = await ctx.context.internalAdapter.findSession(token.split(".")[0]!).catch(() => null);
  return found && new Date(found.session.expiresAt).getTime() > Date.now() ? found.user.id : null;
}

/**
 * Spec, "Limits" (tiers): free 1 OAuth client, plus 10, pro unlimited, counted over the clients
 * the user owns. Registration without a session (the open sandbox) creates an unowned client
 * and is not limited here (its own rate limit applies). Two creations racing past the count
 * can end one over the limit; the next is refused.
 */
export function clientLimitHook(tiers: TierService) {
  return {
    matcher: (ctx: { path?: string }) => CLIENT_CREATES.has(ctx.path ?? ""),
    handler: createAuthMiddleware(async (ctx) => {
      const userId = await callerId(ctx);
      if (!userId) return;
      const tier = TIERS[await tiers.tierOf(userId)];
      if (tier.maxOAuthClients === null) return;
      const owned = await countOwnedClients(ctx.context.adapter, userId);
      if (owned < tier.maxOAuthClients) return;
      const message = `The ${tier.name} tier allows ${tier.maxOAuthClients} OAuth client${tier.maxOAuthClients === 1 ? "" : "s"} and you own ${owned}. Delete one or upgrade your subscription.`;
      // RFC 7591 §3.2.2 errors on the registration endpoint; better-auth's {code, message} on create-client.
      if (ctx.path === AUTH_PATHS.register) throw new APIError("FORBIDDEN", { error: "access_denied", error_description: message, code: CODES.CLIENT_LIMIT_REACHED.code, tier: tier.id, limit: tier.maxOAuthClients });
      throw new APIError("FORBIDDEN", { code: CODES.CLIENT_LIMIT_REACHED.code, message, tier: tier.id, limit: tier.maxOAuthClients });
    }),
  };
}
