import type { OAuthProviderExtension } from "@better-auth/oauth-provider";
import type { BetterAuthPlugin } from "better-auth";
import { createAuthMiddleware, isAPIError } from "better-auth/api";
import type { Kysely } from "kysely";
import { decodeJwt } from "jose";
import { hookOn, onAuthorizationRequest } from "../hooks.js";
import { AUTH_PATHS } from "../../lib/auth-endpoints.js";
import type { Database } from "../../lib/db/tables.js";
import { parseJsonOrNull } from "../../lib/json.js";
import { grantedDetailsOfRefreshToken, recordGrantedDetails } from "../oauth-store/authorization-details.js";
import { providerApi } from "../oauth-store/provider-api.js";
import { validateAuthorizationDetails, type AuthorizationDetail } from "./details.js";
import { authorizationDetailsSchema } from "./schema.js";
import { AUTHORIZATION_DETAILS_TYPES } from "./types.js";

export { describeAuthorizationDetails, isSubsetOfDetails, validateAuthorizationDetails, type AuthorizationDetail, type DetailsCheck } from "./details.js";
export { AUTHORIZATION_DETAILS_TYPES } from "./types.js";

/** RFC 9396 §5. */
export const INVALID_AUTHORIZATION_DETAILS = "invalid_authorization_details";

/**
 * The rule for an authorization request (direct or pushed) that carries `authorization_details`:
 * valid against the registered types, and for a named resource (RFC 8707), so the details travel
 * in an RFC 9068 JWT access token that the resource server enforces from the token alone.
 * Returns the error description, or null when the request is fine.
 */
export function authorizationDetailsProblem(params: Record<string, unknown>): string | null {
  if (params.authorization_details === undefined) return null;
  const check = validateAuthorizationDetails(params.authorization_details);
  if (!check.ok) return check.description;
  if (params.resource === undefined) return "authorization_details needs a resource (RFC 8707): the details travel in that resource's JWT access token";
  // Details are shown to the person every time: a request that forbids asking cannot carry them.
  if (typeof params.prompt === "string" && params.prompt.split(" ").includes("none")) return "authorization_details always need the person's consent, so prompt=none cannot carry them";
  return null;
}

/**
 * RFC 9396 rich authorization requests at the authorization endpoint and the token endpoint.
 *
 * - Authorize: `authorization_details` is checked ({@link authorizationDetailsProblem}); a bad
 *   one goes to the error page as `invalid_authorization_details`. A request with details always
 *   shows the consent page (`prompt=consent`): details are per transaction, and an earlier
 *   consent to the same scopes says nothing about this transfer.
 * - Code exchange: the details the code was issued with (its stored authorization request)
 *   are recorded against the code's identifier, which every refresh token of the grant keeps,
 *   and go into the access token as the `authorization_details` claim (`extension`), so
 *   introspection returns them; refreshed tokens carry the same; the token response names
 *   them (§7).
 */
export function authorizationDetails({ db }: { db: Kysely<Database> }): { extension: OAuthProviderExtension; plugin: BetterAuthPlugin } {
  // The details of a code being exchanged, from the token endpoint's before-hook to the claims of the same request.
  const pending = new Map<string, AuthorizationDetail[]>();

  const atAuthorize = onAuthorizationRequest(
    createAuthMiddleware(async (ctx) => {
      const query = (ctx.query ?? {}) as Record<string, unknown>;
      // A pushed request was checked when it was pushed; the endpoint takes nothing else beside it.
      if (query.authorization_details === undefined || query.request_uri !== undefined) return;
      const problem = authorizationDetailsProblem(query);
      if (problem) {
        const errorUrl = new URL(ctx.context.options.onAPIError?.errorURL ?? `${ctx.context.baseURL}/error`);
        errorUrl.searchParams.set("error", INVALID_AUTHORIZATION_DETAILS);
        errorUrl.searchParams.set("error_description", problem);
        throw ctx.redirect(errorUrl.toString());
      }
      return { context: { query: { ...query, prompt: "consent" } } };
    }),
  );

  const codeExchange = {
    matcher: (ctx: { path?: string; body?: unknown }) => ctx.path === AUTH_PATHS.token && (ctx.body as { grant_type?: unknown } | undefined)?.grant_type === "authorization_code",
    handler: createAuthMiddleware(async (ctx) => {
      const code = (ctx.body as { code?: unknown }).code;
      const api = typeof code === "string" && code ? providerApi(ctx) : null;
      if (!api || typeof code !== "string") return;
      const id = await api.hashToken(code, "authorization_code");
      const stored = await ctx.context.internalAdapter.findVerificationValue(id);
      const value = stored ? (parseJsonOrNull(stored.value) as { userId?: unknown; query?: Record<string, unknown> } | null) : null;
      if (!value?.query?.authorization_details || typeof value.userId !== "string" || typeof value.query.client_id !== "string") return;
      const check = validateAuthorizationDetails(value.query.authorization_details);
      if (!check.ok) return;
      await recordGrantedDetails(db, { id, userId: value.userId, clientId: value.query.client_id, details: check.details });
      // Emptied by the after-hook of the same request; a request that died before it leaves one entry, so bound the map.
      if (pending.size > 10_000) pending.clear();
      pending.set(id, check.details);
    }),
  };

  const tokenResponse = hookOn(
    AUTH_PATHS.token,
    createAuthMiddleware(async (ctx) => {
      const code = (ctx.body as { code?: unknown } | undefined)?.code;
      if (typeof code === "string" && pending.size) {
        const api = providerApi(ctx);
        if (api) pending.delete(await api.hashToken(code, "authorization_code"));
      }
      const returned = ctx.context.returned as Record<string, unknown> | undefined;
      if (!returned || isAPIError(returned) || returned instanceof Response || typeof returned.access_token !== "string" || returned.authorization_details !== undefined) return;
      if (returned.access_token.split(".").length !== 3) return;
      // Our own token, just signed: RFC 9396 §7 names the granted details in the response too.
      const details = decodeJwt(returned.access_token).authorization_details;
      if (details !== undefined) return ctx.json({ ...returned, authorization_details: details });
    }),
  );

  const extension: OAuthProviderExtension = {
    metadata: () => ({ authorization_details_types_supported: [...AUTHORIZATION_DETAILS_TYPES] }),
    claims: {
      async accessToken({ ctx, grantType }) {
        const body = (ctx.body ?? {}) as Record<string, unknown>;
        const api = providerApi(ctx);
        if (!api) return {};
        if (grantType === "authorization_code" && typeof body.code === "string" && pending.size) {
          const details = pending.get(await api.hashToken(body.code, "authorization_code"));
          return details ? { authorization_details: details } : {};
        }
        if (grantType === "refresh_token" && typeof body.refresh_token === "string") {
          const details = await grantedDetailsOfRefreshToken(db, await api.hashToken(body.refresh_token, "refresh_token"));
          return details ? { authorization_details: details } : {};
        }
        return {};
      },
    },
  };

  return {
    extension,
    plugin: {
      id: "authorization-details",
      schema: authorizationDetailsSchema,
      hooks: { before: [atAuthorize, codeExchange], after: [tokenResponse] },
    },
  };
}
