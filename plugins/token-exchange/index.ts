import type { OAuthProviderExtension } from "@better-auth/oauth-provider";
import type { BetterAuthPlugin } from "better-auth";
import { createAuthMiddleware, isAPIError } from "better-auth/api";
import { hookOn } from "../hooks.js";
import { AUTH_PATHS } from "../../lib/auth-endpoints.js";
import { findActiveExchange } from "../oauth-store/exchanges.js";
import { tokenExchangeSchema } from "./schema.js";
import { TOKEN_EXCHANGE_GRANT, tokenExchangeGrant, type TokenExchangeOptions } from "./grant.js";
import { reusedRefreshHooks, revokedGrantHook } from "./revocation.js";

export { TOKEN_EXCHANGE_GRANT } from "./grant.js";

/**
 * RFC 8693 token exchange for delegation: `extension` is oauth-provider's (the grant at
 * /oauth2/token, listed in `grant_types_supported`); `plugin` carries its table and the hooks
 * that make a delegated token's record count: introspection answers inactive once the record
 * is gone (RFC 7662 §2.2), and revoking a refresh token (RFC 7009) or reusing a rotated one
 * ends what was exchanged under its grant.
 */
export function tokenExchange(options: TokenExchangeOptions): { extension: OAuthProviderExtension; plugin: BetterAuthPlugin } {
  const introspected = hookOn(
    AUTH_PATHS.introspect,
    createAuthMiddleware(async (ctx) => {
      const returned = ctx.context.returned as Record<string, unknown> | undefined;
      if (!returned || isAPIError(returned) || returned instanceof Response || returned.active !== true || returned.act === undefined) return;
      const record = typeof returned.jti === "string" ? await findActiveExchange(options.db, returned.jti) : null;
      if (!record) return ctx.json({ active: false });
    }),
  );
  const reuse = reusedRefreshHooks(options.db);
  return {
    extension: { grants: { [TOKEN_EXCHANGE_GRANT]: tokenExchangeGrant(options) } },
    plugin: { id: "token-exchange", schema: tokenExchangeSchema, hooks: { before: [reuse.before], after: [introspected, revokedGrantHook(options.db), reuse.after] } },
  };
}
