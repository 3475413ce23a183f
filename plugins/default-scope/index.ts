import type { BetterAuthPlugin } from "better-auth";
import { createAuthMiddleware } from "better-auth/api";
import { isJsonObject } from "../../lib/json.js";
import { hookOn } from "../hooks.js";
import { findClientRow } from "../oauth-store/adapter.js";

/**
 * The scope of an authorization request that names none (RFC 6749 §3.3 lets the server pick a
 * default). oauth-provider's own default is every scope the client registered, and a client
 * registered without `scope` holds all of ours: a request without `scope` (common among MCP
 * clients) would ask for backup write access and refresh tokens. Here it is sign-in and profile
 * only: `openid profile`, as far as the client may have them. A client whose registered scopes
 * hold neither keeps oauth-provider's answer (its own, explicitly registered set).
 */
export const DEFAULT_SCOPES = ["openid", "profile"] as const;

const OFFLINE_ACCESS = "offline_access";

/** A client's list column as the adapter hands it back: an array, or space/comma-separated text. */
function listOf(value: unknown): string[] | null {
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === "string");
  return typeof value === "string" ? value.split(/[ ,]/).filter(Boolean) : null;
}

/**
 * The scope an authorization request asks for, settled before oauth-provider reads it:
 * - none named: {@link DEFAULT_SCOPES};
 * - `offline_access` from a client not registered for the refresh_token grant is dropped
 *   (OIDC Core §11 lets the server ignore it): such a client gets no refresh token
 *   (patches/README.md op-refresh-grant-registered), so the consent page must not promise
 *   "act for you while you are away", nor the token response list a scope not granted. A
 *   client not registered yet (a client ID metadata document fetched during this request)
 *   keeps the word, and so does a device authorization request (its endpoint re-reads the
 *   raw form); neither gets a refresh token.
 */
const requestScope = hookOn(
  "/oauth2/authorize",
  createAuthMiddleware(async (ctx) => {
    // GET carries the request in the query, POST in the body; changed in place (as claims-policy).
    for (const params of [ctx.query, ctx.body]) {
      if (!isJsonObject(params) || typeof params.client_id !== "string") continue;
      const requested = typeof params.scope === "string" ? params.scope.split(" ").filter(Boolean) : [];
      if (requested.length > 0 && !requested.includes(OFFLINE_ACCESS)) continue;
      const client = await findClientRow<{ scopes?: unknown; grantTypes?: unknown }>(ctx.context.adapter, params.client_id);
      if (requested.length === 0) {
        const registered = listOf(client?.scopes);
        const scopes = registered ? DEFAULT_SCOPES.filter((s) => registered.includes(s)) : [...DEFAULT_SCOPES];
        if (scopes.length) params.scope = scopes.join(" ");
        continue;
      }
      // oauth-provider reads no grant types as authorization_code alone.
      const grants = listOf(client?.grantTypes);
      const others = requested.filter((s) => s !== OFFLINE_ACCESS);
      if (client && !grants?.includes("refresh_token") && others.length > 0) params.scope = others.join(" ");
    }
  }),
);

export function defaultScopePlugin() {
  return { id: "default-scope", hooks: { before: [requestScope] } } satisfies BetterAuthPlugin;
}
