import type { LaneRoute } from "../../lib/fast-lane.js";
import type { UserInfoTokenRow, UserInfoTokenStore } from "../oauth-store/userinfo.js";
import { NO_STORE, sha256 } from "./client-credentials.js";
import { tokenLimitKey } from "../../lib/auth-limits.js";

/**
 * OpenID Connect userinfo (OIDC Core §5.3) for an opaque access token sent as
 * `Authorization: Bearer`, answered from one prepared read (plugins/oauth-store/userinfo.ts)
 * instead of better-auth's pipeline (its router and hooks, then the token, its client, its
 * session and its user one by one, and the token checked a second time by the claims policy's
 * after-hook).
 *
 * It answers only the common case, and only with the claims; anything else, every refusal
 * included, goes to @better-auth/oauth-provider's own endpoint (null). The common case:
 *   1. `GET` with exactly `Authorization: Bearer <token>` of plain token characters, the token
 *      not JWS-shaped; no query string, no DPoP proof, no cookie and no Origin (the app's CORS
 *      and origin rules);
 *   2. the token (by its SHA-256, `storeTokens: "hashed"`) is unexpired, unrevoked, bound to no
 *      resource (RFC 8707) and no key (DPoP/mTLS), granted with `openid`, with no `claims`
 *      request for userinfo (the claims policy decides those);
 *   3. its client is registered here (no metadata document), not disabled, with public subject
 *      identifiers; its session, if it has one, still exists and has not expired; its user exists.
 * The answer is oauth-provider's for such a token: `sub`, the standard claims of the token's
 * scopes (`profile`: name, picture, given_name, family_name; `email`: email, email_verified),
 * then the deployment's own userinfo claims (auth.config.ts: the selected BAP profile), `sub`
 * kept. tests/oauth/fast-userinfo.test.ts asks both ways and compares the answers byte for byte.
 * Nothing is cached: a revoked token or a signed-out session is refused at once everywhere.
 */
export interface FastUserInfoOptions {
  store: UserInfoTokenStore;
  /** The endpoint's public path (BASE_PATH + /oauth2/userinfo). */
  path: string;
  /** oauth-provider's customAccessTokenClaims (auth.config.ts): the token's claims the next function reads. */
  accessTokenClaims: (input: { scopes: string[]; referenceId?: string }) => Record<string, unknown> | Promise<Record<string, unknown>>;
  /** oauth-provider's customUserInfoClaims (auth.config.ts), as it calls them. */
  userInfoClaims: (input: { user: NonNullable<UserInfoTokenRow["user"]>; scopes: string[]; jwt: Record<string, unknown> }) => Promise<Record<string, unknown>>;
}

/** RFC 6750 §2.1 b64token characters. */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/** The bearer token of the quiet case's headers, or null. */
function bearerOf(headers: LaneRequestHeaders): string | null {
  const { authorization } = headers;
  if (typeof authorization !== "string" || !authorization.startsWith("Bearer ") || headers.dpop || headers.cookie || headers.origin) return null;
  const token = authorization.slice(7);
  return B64TOKEN.test(token) && token.split(".").length !== 3 ? token : null;
}
type LaneRequestHeaders = Parameters<LaneRoute["answer"]>[0]["headers"];

/** oauth-provider's given and family names: the last word, and the words before it. */
function splitDisplayName(name: string): { given?: string; family?: string } {
  const parts = name.split(" ").filter((part) => part !== "");
  return parts.length <= 1 ? {} : { given: parts.slice(0, -1).join(" "), family: parts.at(-1) };
}

/** The defined values of `claims` (oauth-provider's pickClaims without a base). */
function defined(claims: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(claims)) if (value !== undefined) out[key] = value;
  return out;
}

export function userInfoAnswerer({ store, accessTokenClaims, userInfoClaims }: Omit<FastUserInfoOptions, "path">) {
  return async function answer(headers: LaneRequestHeaders): Promise<string | null> {
    const token = bearerOf(headers);
    if (!token) return null;
    const row = await store.findToken(sha256(token));
    const now = Date.now();
    if (!row?.user || !row.client || !row.scopes || row.revoked || row.expiresAt.getTime() < now || row.confirmation != null) return null;
    if (Array.isArray(row.resources) ? row.resources.length > 0 : row.resources != null) return null;
    const claimsAsked = row.requestedUserInfoClaims;
    if (claimsAsked != null && !(Array.isArray(claimsAsked) && claimsAsked.length === 0)) return null;
    if (row.client.disabled || row.client.discovered || row.client.subjectType === "pairwise") return null;
    if (row.sessionId && (!row.session || row.session.expiresAt.getTime() < now)) return null;
    const { scopes, user } = row;
    if (!scopes.includes("openid")) return null;
    const profile = scopes.includes("profile");
    const email = scopes.includes("email");
    const names = profile ? splitDisplayName(user.name ?? "") : {};
    const base: Record<string, unknown> = {
      sub: user.id,
      ...(profile ? { name: user.name ?? undefined, picture: user.image ?? undefined, given_name: names.given, family_name: names.family } : {}),
      ...(email ? { email: user.email ?? undefined, email_verified: user.emailVerified } : {}),
    };
    const jwt = { ...(await accessTokenClaims({ scopes, referenceId: row.referenceId ?? undefined })), sub: user.id, scope: scopes.join(" ") };
    return JSON.stringify({ ...base, ...defined(await userInfoClaims({ user, scopes, jwt })), sub: user.id });
  };
}

/** The fast userinfo in the fast lane (lib/fast-lane.ts), counted against the token's budget. */
export function userInfoLaneRoute(options: FastUserInfoOptions): LaneRoute {
  const answer = userInfoAnswerer(options);
  return {
    method: "GET",
    path: options.path,
    label: options.path,
    credential: (req) => {
      const token = bearerOf(req.headers);
      return token ? { limit: "token", key: tokenLimitKey(token) } : null;
    },
    async answer(req) {
      const body = await answer(req.headers);
      return body === null ? null : { status: 200, headers: NO_STORE, body };
    },
  };
}
