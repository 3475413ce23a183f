import type { BetterAuthPlugin } from "better-auth";
import type { createAuthMiddleware } from "better-auth/api";

/** One entry of a plugin's `hooks.before` or `hooks.after`. */
export type Hook = NonNullable<NonNullable<BetterAuthPlugin["hooks"]>["before"]>[number];

/**
 * A hook on one endpoint. better-auth matches hooks by the endpoint's path (the route as
 * declared, without the base path or the query string), so a query cannot steer around it.
 */
export function hookOn(path: string, handler: ReturnType<typeof createAuthMiddleware>): Hook {
  return { matcher: (ctx) => ctx.path === path, handler };
}

/**
 * A hook on the authorization endpoint as a request reaches it, not on oauth-provider's own
 * re-entry after sign-in or consent (dispatched with its `authorizeSettings`), which carries the
 * request that was already checked, from its signed copy.
 */
export function onAuthorizationRequest(handler: ReturnType<typeof createAuthMiddleware>): Hook {
  return { matcher: (ctx) => ctx.path === "/oauth2/authorize" && (ctx as { authorizeSettings?: unknown }).authorizeSettings === undefined, handler };
}
