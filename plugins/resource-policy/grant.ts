import { getOAuthProviderApi } from "@better-auth/oauth-provider";
import { createAuthMiddleware } from "better-auth/api";
import { isJsonObject, parseJsonOrNull } from "../../lib/json.js";
import { hookOn, type Hook } from "../hooks.js";
import { AUTH_PATHS } from "../../lib/auth-endpoints.js";
import { findRefreshTokenResources } from "../oauth-store/adapter.js";

type EndpointContext = Parameters<typeof getOAuthProviderApi>[0];
type ProviderOptions = Parameters<typeof getOAuthProviderApi>[1];

/** RFC 8707 `resource` as oauth-provider reads it (`toResourceList`): one value, or a non-empty list. */
function resourceList(value: unknown): string[] | null {
  if (typeof value === "string") return [value];
  return Array.isArray(value) && value.length > 0 ? value.filter((r): r is string => typeof r === "string") : null;
}

/**
 * The resources the grant a token request presents was authorized for: [] for none, null when
 * there is no such grant (the endpoint answers that). Read the way oauth-provider stores them,
 * before it consumes anything: an authorization code's verification value (`resource`, else the
 * authorization request's), a refresh token's row. Neither `prefix` nor `formatRefreshToken` is
 * configured, so a refresh token is looked up by its stored hash alone.
 */
async function presentedGrantResources(ctx: EndpointContext, body: Record<string, unknown>): Promise<string[] | null> {
  const provider = ctx.context.getPlugin("oauth-provider") as { options: ProviderOptions } | null;
  if (!provider) return null;
  const api = getOAuthProviderApi(ctx, provider.options);
  if (body.grant_type === "authorization_code" && typeof body.code === "string" && body.code) {
    const row = await ctx.context.internalAdapter.findVerificationValue(await api.hashToken(body.code, "authorization_code"));
    const value = parseJsonOrNull(row?.value) as { resource?: unknown; query?: { resource?: unknown } } | null;
    if (!value) return null;
    return resourceList(value.resource) ?? resourceList(value.query?.resource) ?? [];
  }
  if (body.grant_type === "refresh_token" && typeof body.refresh_token === "string" && body.refresh_token) {
    const row = await findRefreshTokenResources(ctx.context.adapter, await api.hashToken(body.refresh_token, "refresh_token"));
    return row ? (resourceList(row.resources) ?? []) : null;
  }
  return null;
}

/**
 * RFC 8707 at the token endpoint: a grant authorized for no resource stays without one.
 * oauth-provider compares a requested `resource` with the authorized ones only when the grant
 * has some; for a grant with none, a resource named at the code exchange or on refresh got a
 * JWT for that audience (and a refresh token bound to it), although the person never saw it
 * and naming it at authorize would have brought the consent page back. The device grant
 * already refuses this (`invalid_target`); here the code and refresh grants do too.
 *
 * The grant is read by this before hook, while the code still exists; the refusal itself is
 * the resource policy's (`refusesResource`, called by oauth-provider once the client is
 * authenticated and the code or refresh token checked), so a request that would fail those
 * checks gets their answer, and nothing tells an unauthenticated caller about a grant.
 */
export function grantWithoutResources() {
  /** Token requests, by their request context, that name a resource for a grant authorized for none. */
  const widening = new WeakSet<object>();
  const hook: Hook = hookOn(
    AUTH_PATHS.token,
    createAuthMiddleware(async (ctx) => {
      const body = isJsonObject(ctx.body) ? ctx.body : null;
      if (!body || !resourceList(body.resource)) return;
      const granted = await presentedGrantResources(ctx as unknown as EndpointContext, body);
      if (granted?.length === 0) widening.add(ctx.context);
    }),
  );
  return {
    hook,
    /** Whether this token request (its endpoint context) names a resource its grant never had. */
    widens: (ctx: { context: object }) => widening.has(ctx.context),
  };
}
