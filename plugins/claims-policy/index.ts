import type { BetterAuthPlugin } from "better-auth";
import { createAuthMiddleware } from "better-auth/api";
import { hookOn } from "../hooks.js";
import { isJsonObject } from "../../lib/json.js";
import { releasableClaims } from "../bap-identity/claims.js";
import { verifyAccessToken } from "../oauth-bearer/index.js";
import { AUTH_PATHS } from "../../lib/auth-endpoints.js";

// RFC 6750 §2.1 (Bearer) and RFC 9449 §7.1 (DPoP): the scheme, then the token.
const ACCESS_TOKEN = /^(?:Bearer|DPoP) +(\S+) *$/i;

/** The access token userinfo was called with: the Authorization header, or `access_token` in a POST form (RFC 6750 §2.2). */
function userInfoToken(ctx: { headers?: Headers; body?: unknown }): string | null {
  const header = ACCESS_TOKEN.exec(ctx.headers?.get("authorization") ?? "")?.[1];
  if (header) return header;
  const body = ctx.body as { access_token?: unknown } | undefined;
  return typeof body?.access_token === "string" ? body.access_token : null;
}

/**
 * Claims leave only under the scopes the person consented to (OIDC Core §5.4):
 * - the `claims` request parameter (§5.5) is not offered (discovery says
 *   `claims_parameter_supported: false`): it is dropped from authorization requests before
 *   oauth-provider reads it, since the consent page shows scopes only and oauth-provider would
 *   otherwise release e-mail and name to a token granted `openid` alone;
 * - at userinfo, the release point, standard claims the token's scopes do not cover are
 *   removed, so a grant recorded with a claims request before this rule, or reaching
 *   oauth-provider another way, still releases nothing beyond its scopes; nor a `picture`
 *   that is not an https URL (plugins/bap-identity/claims.ts).
 * ID tokens carry no standard profile claims (oauth-provider guards them; ours add BAP claims
 * under `profile` only).
 */
const noClaimsParameter = hookOn(
  "/oauth2/authorize",
  createAuthMiddleware(async (ctx) => {
    // In place: a hook's returned context is merged into the request's, which can add or
    // replace members but not remove one. GET carries the request in the query, POST in the body.
    for (const params of [ctx.query, ctx.body]) {
      if (isJsonObject(params)) delete params.claims;
    }
  }),
);

const userinfoWithinScopes = hookOn(
  AUTH_PATHS.userinfo,
  createAuthMiddleware(async (ctx) => {
    const returned = ctx.context.returned;
    if (!isJsonObject(returned)) return;
    const token = userInfoToken(ctx);
    // Fail closed: a token that no longer checks out releases no scoped claim.
    const bearer = token ? await verifyAccessToken(ctx as never, token, `${ctx.context.baseURL}${AUTH_PATHS.userinfo}`) : null;
    return ctx.json(releasableClaims(returned, bearer?.scopes ?? []));
  }),
);

export function claimsPolicy() {
  return { id: "claims-policy", hooks: { before: [noClaimsParameter], after: [userinfoWithinScopes] } } satisfies BetterAuthPlugin;
}
