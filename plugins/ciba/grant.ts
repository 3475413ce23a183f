import type { OAuthExtensionGrantHandler } from "@better-auth/oauth-provider";
import { findSelectedIdentity } from "../bap-identity/store.js";
import { proofBinding } from "../token-exchange/binding.js";
import { refuse } from "./errors.js";
import type { CibaOptions } from "./options.js";
import { findByAuthReqId, recordPoll, redeemRequest } from "./store.js";

/**
 * The CIBA grant at the token endpoint (CIBA §10.1, poll and ping): `grant_type`
 * urn:openid:params:grant-type:ciba with `auth_req_id`, from the client the request was made by.
 * While the person has not answered: authorization_pending, or slow_down for a poll sooner
 * than the interval (which then grows by 5 s, §11); a denial is access_denied, a request past
 * its expiry expired_token. An approved request gives the token set once: access token, ID
 * token (`openid` is always asked for), a refresh token with offline_access; a second
 * redemption is invalid_grant. A request made with a DPoP proof is redeemed only with a proof
 * by the same key, and its tokens are bound to it (RFC 9449).
 */
export function cibaGrant(options: CibaOptions): OAuthExtensionGrantHandler {
  return async ({ ctx, opts, provider }) => {
    const { client } = await provider.authenticateClient();
    const authReqId = (ctx.body as Record<string, unknown> | undefined)?.auth_req_id;
    if (typeof authReqId !== "string" || !authReqId || authReqId.length > 256) refuse("invalid_request", "auth_req_id is required");
    const request = await findByAuthReqId(options.db, authReqId);
    // Another client's request is as unknown as no request.
    if (!request || request.clientId !== client.clientId || request.status === "redeemed") refuse("invalid_grant", "auth_req_id is not valid for this client");
    if (request.expiresAt <= new Date()) refuse("expired_token", "the request expired before it was approved; start a new one");
    if (request.status === "denied") refuse("access_denied", "the person denied the request");
    if (request.status === "pending") {
      if (!(await recordPoll(options.db, request))) refuse("slow_down", `poll no more often than every ${request.interval + 5} seconds`);
      refuse("authorization_pending", "the person has not answered yet");
    }

    let confirmation: { jkt: string } | undefined;
    if (request.dpopJkt) {
      confirmation = await proofBinding({ ctx, opts }, { dpopBoundAccessTokens: true });
      if (confirmation?.jkt !== request.dpopJkt) refuse("invalid_dpop_proof", "the DPoP proof is not by the key the request was made with");
    }
    const user = await ctx.context.internalAdapter.findUserById(request.userId);
    if (!user) refuse("invalid_grant", "auth_req_id is not valid for this client");
    if (!(await redeemRequest(options.db, request.id))) refuse("invalid_grant", "auth_req_id is not valid for this client");
    // The identity the tokens speak for: the BAP id the client named, else the person's primary one.
    const referenceId = request.referenceId ?? (await findSelectedIdentity(options.db, user.id))?.bapId;
    const details = request.authorizationDetails ? (JSON.parse(request.authorizationDetails) as unknown[]) : undefined;
    return provider.issueTokens({
      client,
      scopes: request.scope.split(" "),
      user,
      ...(referenceId ? { referenceId } : {}),
      authTime: request.decidedAt ?? new Date(),
      ...(confirmation ? { confirmation } : {}),
      // RFC 9396 §7: what was authorized travels with the tokens.
      ...(details ? { accessTokenClaims: { authorization_details: details }, tokenResponse: { authorization_details: details } } : {}),
    });
  };
}
