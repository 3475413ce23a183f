import type { Auth } from "../auth.config.js";
import { accessTokenOf, type DpopResourceGuard } from "../lib/dpop.js";
import type { OAuthBearer } from "../plugins/oauth-bearer/index.js";

export type { OAuthBearer };

/** Whether the request presents an access token (RFC 6750 `Bearer` or RFC 9449 `DPoP`). */
export const hasAccessToken = (headers: Headers) => accessTokenOf(headers) !== null;

/**
 * The OAuth access token of the request, checked by oauth-provider (see plugins/oauth-bearer)
 * and, when bound to a key, with its DPoP proof (lib/dpop.ts; a refusal throws `DpopRefusal`):
 * null when there is none or it is not active. A session token sent as a bearer is not an
 * OAuth access token and yields null here (better-auth's getSession handles that one).
 */
export async function findOAuthBearer(auth: Auth, req: Request, dpop: DpopResourceGuard): Promise<OAuthBearer | null> {
  const credential = accessTokenOf(req.headers);
  if (!credential) return null;
  const bearer = await auth.api.verifyOAuthAccessToken({ body: { token: credential.token } });
  if (bearer) await dpop.check(req, credential, bearer.jkt);
  return bearer;
}
