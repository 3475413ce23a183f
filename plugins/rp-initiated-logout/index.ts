import type { BetterAuthPlugin } from "better-auth";
import { createAuthMiddleware, isAPIError } from "better-auth/api";
import { hookOn } from "../hooks.js";
import { AUTH_PATHS } from "../../lib/auth-endpoints.js";
import { updateClientRow } from "../oauth-store/adapter.js";

/**
 * OIDC RP-Initiated Logout 1.0 §3.1: a client registers `post_logout_redirect_uris` to
 * use the end-session endpoint. @better-auth/oauth-provider 1.7.5 stores them, but
 * dynamic registration cannot set the client's `enableEndSession` flag (the request
 * schema drops `enable_end_session`), so end-session refused every such client with
 * `invalid_client` and its ID tokens carried no `sid`. Registering at least one
 * post-logout redirect URI now turns the flag on. Nothing else is loosened: the
 * id_token_hint must verify for that client, and a redirect is followed only to an
 * exactly registered URI.
 */
const endSessionForLogoutUris = hookOn(
  AUTH_PATHS.register,
  createAuthMiddleware(async (ctx) => {
    const returned = ctx.context.returned as Record<string, unknown> | undefined;
    if (!returned || typeof returned !== "object" || isAPIError(returned) || returned instanceof Response) return;
    const uris = returned.post_logout_redirect_uris;
    if (typeof returned.client_id !== "string" || !Array.isArray(uris) || uris.length === 0) return;
    await updateClientRow(ctx.context.adapter, returned.client_id, { enableEndSession: true });
  }),
);

export function rpInitiatedLogout() {
  return { id: "rp-initiated-logout", hooks: { after: [endSessionForLogoutUris] } } satisfies BetterAuthPlugin;
}
