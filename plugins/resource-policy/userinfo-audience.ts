import { APIError } from "better-auth/api";

/**
 * Userinfo is a protected resource like any other (OIDC Core §5.3), so it checks `aud` as
 * RFC 9068 §4 asks of every resource server: a token with an audience must name the userinfo
 * endpoint. A JWT issued for another resource (RFC 8707) is that resource's; if userinfo took
 * it, any resource server could read the person's claims with the tokens it receives.
 *
 * What userinfo takes: an opaque access token (a grant without `resource`: it carries no
 * audience and is for this server), or a JWT whose `aud` is the userinfo endpoint (a client
 * that wants a resource and userinfo names both at authorize, then asks the token endpoint for
 * one token per resource). `aud` is never widened to add userinfo to another resource's token.
 *
 * Called with the payload oauth-provider has already verified (`customUserInfoClaims`), and
 * answers exactly as oauth-provider does for an invalid token (RFC 6750 §3.1).
 */
export function assertTokenForUserInfo(payload: { aud?: unknown }, userInfoUrl: string): void {
  const aud = payload.aud;
  if (aud === undefined || aud === null) return;
  const audiences = Array.isArray(aud) ? aud : [aud];
  if (audiences.includes(userInfoUrl)) return;
  throw new APIError(
    "UNAUTHORIZED",
    { error: "invalid_token", error_description: "Invalid access token" },
    { "WWW-Authenticate": 'Bearer error="invalid_token", error_description="Invalid access token"' },
  );
}
