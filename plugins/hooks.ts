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
