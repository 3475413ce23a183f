import type { Auth } from "../auth.config.js";
import type { OAuthBearer } from "../plugins/oauth-bearer/index.js";

export type { OAuthBearer };

// RFC 6750 §2.1: "Bearer" 1*SP b64token.
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/** The credential of an `Authorization: Bearer` header, or null without one. */
export function bearerTokenOf(headers: Headers): string | null {
  const match = BEARER.exec(headers.get("authorization") ?? "");
  return match?.[1] ?? null;
}

/**
 * The OAuth access token of the request, checked by oauth-provider (see plugins/oauth-bearer):
 * null when there is none or it is not active. A session token sent as a bearer is not an
 * OAuth access token and yields null here (better-auth's getSession handles that one).
 */
export async function findOAuthBearer(auth: Auth, headers: Headers): Promise<OAuthBearer | null> {
  const token = bearerTokenOf(headers);
  if (!token) return null;
  return auth.api.verifyOAuthAccessToken({ body: { token } });
}
