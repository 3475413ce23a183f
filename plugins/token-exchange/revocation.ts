import { createAuthMiddleware, isAPIError } from "better-auth/api";
import type { Kysely } from "kysely";
import { basicCredentialsOf } from "../../lib/auth-request.js";
import { AUTH_PATHS } from "../../lib/auth-endpoints.js";
import type { Database } from "../../lib/db/tables.js";
import { findRefreshTokenGrant } from "../oauth-store/adapter.js";
import { revokeExchangesOfGrant } from "../oauth-store/exchanges.js";
import { providerApi } from "../oauth-store/provider-api.js";
import { hookOn, type Hook } from "../hooks.js";

/** The client a revocation request names: Basic credentials (RFC 6749 §2.3.1, form-encoded) or `client_id` in the form. */
function requestingClient(ctx: { request?: Request; body?: unknown }): string | null {
  const basic = basicCredentialsOf(ctx.request?.headers.get("authorization"));
  if (basic) {
    try {
      return decodeURIComponent(basic.rawId.replace(/\+/g, " "));
    } catch {
      return null;
    }
  }
  const body = ctx.body as { client_id?: unknown } | undefined;
  return typeof body?.client_id === "string" ? body.client_id : null;
}

type RefreshGrant = NonNullable<Awaited<ReturnType<typeof findRefreshTokenGrant>>>;

/**
 * A refresh token used again after its rotation makes oauth-provider delete the whole family of
 * that person and app (OAuth 2.1 §4.3.1: reuse means it may have been stolen), which ends the
 * grant: every token exchanged from it ends too. The presented token's row is read before the
 * grant runs (its family may be gone after); the records go once it answered with an error and
 * that row is gone, so an unknown token or a refused client changes nothing.
 */
export function reusedRefreshHooks(db: Kysely<Database>): { before: Hook; after: Hook } {
  const presented = new WeakMap<object, RefreshGrant>();
  const before = hookOn(
    AUTH_PATHS.token,
    createAuthMiddleware(async (ctx) => {
      const body = ctx.body as { grant_type?: unknown; refresh_token?: unknown } | undefined;
      const api = providerApi(ctx);
      if (body?.grant_type !== "refresh_token" || typeof body.refresh_token !== "string" || !body.refresh_token || !api) return;
      const row = await findRefreshTokenGrant(ctx.context.adapter, await api.hashToken(body.refresh_token, "refresh_token"));
      if (row?.revoked) presented.set(ctx.context, row);
    }),
  );
  const after = hookOn(
    AUTH_PATHS.token,
    createAuthMiddleware(async (ctx) => {
      const row = presented.get(ctx.context);
      const body = ctx.body as { refresh_token?: string };
      const api = providerApi(ctx);
      if (!row || !isAPIError(ctx.context.returned) || !api || !body.refresh_token) return;
      if (await findRefreshTokenGrant(ctx.context.adapter, await api.hashToken(body.refresh_token, "refresh_token"))) return;
      await revokeExchangesOfGrant(db, row.userId, row.clientId);
    }),
  );
  return { before, after };
}

/**
 * Revoking a refresh token at /oauth2/revoke (RFC 7009 §2.1: "the authorization server SHOULD
 * also invalidate all access tokens based on the same authorization grant") ends the person's
 * grant, so every token exchanged from it ends too: after oauth-provider revoked the row, the
 * records of the delegated tokens of that person and app go. Only for the token's own client,
 * once it authenticated (a refused request changes nothing).
 */
export function revokedGrantHook(db: Kysely<Database>): Hook {
  return hookOn(
    AUTH_PATHS.revoke,
    createAuthMiddleware(async (ctx) => {
      const returned = ctx.context.returned;
      if (isAPIError(returned) && returned.statusCode === 401) return;
      const token = (ctx.body as { token?: unknown } | undefined)?.token;
      const api = providerApi(ctx);
      if (typeof token !== "string" || !token || !api) return;
      const row = await findRefreshTokenGrant(ctx.context.adapter, await api.hashToken(token, "refresh_token"));
      if (!row?.revoked || row.clientId !== requestingClient(ctx)) return;
      await revokeExchangesOfGrant(db, row.userId, row.clientId);
    }),
  );
}
