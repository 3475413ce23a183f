import { getOAuthProviderApi } from "@better-auth/oauth-provider";
import { APIError, createAuthEndpoint, sessionMiddleware } from "better-auth/api";
import { symmetricDecrypt } from "better-auth/crypto";
import * as v from "valibot";
import { CIBA_ERROR_CODES } from "./error-codes.js";
import type { CibaOptions } from "./options.js";
import { sendPing } from "./ping.js";
import { decideRequest, findRequestFor } from "./store.js";
import { signedInStrongly } from "./strong.js";

const DecisionBody = v.object({
  id: v.pipe(v.string(), v.uuid("id must be a request id")),
  decision: v.picklist(["approve", "deny"], "decision must be approve or deny"),
});


/**
 * POST /ciba/decide (signed in): the person a CIBA request names approves or denies it. Only
 * that person: anyone else's session gets the same 404 as an unknown id. A request that asked
 * for strong approval (acr phr) is approved only by a session made with a passkey or the
 * identity key in the last minutes (./strong.ts); denying never needs it. One conditional write
 * decides (./store.ts). In ping mode the client is then notified (./ping.ts).
 */
export function cibaDecision(options: CibaOptions) {
  return createAuthEndpoint(
    "/ciba/decide",
    { method: "POST", body: DecisionBody, use: [sessionMiddleware], requireHeaders: true, metadata: { openapi: { description: "Approve or deny a CIBA request addressed to the signed-in person." } } },
    async (ctx) => {
      const { session } = ctx.context.session;
      const request = await findRequestFor(options.db, ctx.body.id, session.userId);
      if (!request || request.status !== "pending" || request.expiresAt <= new Date()) throw APIError.from("NOT_FOUND", CIBA_ERROR_CODES.REQUEST_NOT_FOUND);
      const approve = ctx.body.decision === "approve";
      if (approve && request.strong && !(await signedInStrongly(ctx.context.internalAdapter, session))) throw APIError.from("FORBIDDEN", CIBA_ERROR_CODES.STRONG_APPROVAL_REQUIRED);
      if (!(await decideRequest(options.db, request.id, session.userId, approve ? "approved" : "denied"))) throw APIError.from("NOT_FOUND", CIBA_ERROR_CODES.REQUEST_NOT_FOUND);
      if (request.deliveryMode === "ping" && request.pingAuthReqId) {
        const opts = (ctx.context.getPlugin("oauth-provider") as { options: Parameters<typeof getOAuthProviderApi>[1] }).options;
        const client = (await getOAuthProviderApi(ctx, opts).getClient(request.clientId)) as { backchannelClientNotificationEndpoint?: string | null } | null;
        const endpoint = client?.backchannelClientNotificationEndpoint;
        if (endpoint) sendPing(options, request, await symmetricDecrypt({ key: ctx.context.secret, data: request.pingAuthReqId }), endpoint);
      }
      ctx.setHeader("Cache-Control", "no-store");
      return ctx.json({ status: approve ? "approved" : "denied" });
    },
  );
}
