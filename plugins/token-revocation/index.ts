import type { BetterAuthPlugin } from "better-auth";
import { createAuthMiddleware, isAPIError } from "better-auth/api";
import { hookOn } from "../hooks.js";
import { AUTH_PATHS } from "../../lib/auth-endpoints.js";

/**
 * RFC 7009 §2.2: the revocation endpoint answers 200 whether or not the token existed, so
 * every 200 carries the same empty body. oauth-provider returns whatever its revocation
 * helper returned (nothing, `null`, ...), which told a caller which path its token took.
 */
const emptyRevocationBody = hookOn(
  AUTH_PATHS.revoke,
  createAuthMiddleware(async (ctx) => {
    const returned = ctx.context.returned;
    if (isAPIError(returned) || returned instanceof Response) return;
    // An after hook's `undefined` keeps the endpoint's answer; "" replaces it with an empty body.
    return "";
  }),
);

export function tokenRevocation() {
  return { id: "token-revocation", hooks: { after: [emptyRevocationBody] } } satisfies BetterAuthPlugin;
}
