import type { BetterAuthPlugin } from "better-auth";
import { createAuthMiddleware } from "better-auth/api";
import { isJsonObject } from "../../lib/json.js";
import { hookOn } from "../hooks.js";

/**
 * The scope of an authorization request that names none (RFC 6749 §3.3 lets the server pick a
 * default). oauth-provider's own default is every scope the client registered, and a client
 * registered without `scope` holds all of ours: a request without `scope` (common among MCP
 * clients) would ask for backup write access and refresh tokens. Here it is sign-in and profile
 * only: `openid profile`, as far as the client may have them. A client whose registered scopes
 * hold neither keeps oauth-provider's answer (its own, explicitly registered set).
 */
export const DEFAULT_SCOPES = ["openid", "profile"] as const;

const defaultScope = hookOn(
  "/oauth2/authorize",
  createAuthMiddleware(async (ctx) => {
    // GET carries the request in the query, POST in the body; changed in place (as claims-policy).
    for (const params of [ctx.query, ctx.body]) {
      if (!isJsonObject(params) || typeof params.client_id !== "string") continue;
      if (typeof params.scope === "string" && params.scope.trim() !== "") continue;
      const client = (await ctx.context.adapter.findOne({ model: "oauthClient", where: [{ field: "clientId", value: params.client_id }] })) as { scopes?: unknown } | null;
      const registered = Array.isArray(client?.scopes) ? (client.scopes as string[]) : typeof client?.scopes === "string" ? client.scopes.split(/[ ,]/) : null;
      const scopes = registered ? DEFAULT_SCOPES.filter((s) => registered.includes(s)) : [...DEFAULT_SCOPES];
      if (scopes.length) params.scope = scopes.join(" ");
    }
  }),
);

export function defaultScopePlugin() {
  return { id: "default-scope", hooks: { before: [defaultScope] } } satisfies BetterAuthPlugin;
}
