import { APIError, createAuthMiddleware } from "better-auth/api";
import { AUTH_PATHS } from "../../lib/auth-endpoints.js";
import { isPublicHttpsUrl } from "../../lib/user-facing.js";
import type { Hook } from "../hooks.js";
import { updateClientRow } from "../oauth-store/adapter.js";
import { CIBA_GRANT } from "./options.js";

function invalidMetadata(description: string): never {
  throw new APIError("BAD_REQUEST", { error: "invalid_client_metadata", error_description: description });
}

const bodyOf = (ctx: { body?: unknown }) => (ctx.body && typeof ctx.body === "object" && !Array.isArray(ctx.body) ? (ctx.body as Record<string, unknown>) : null);

/**
 * CIBA §4 client metadata at dynamic registration: `backchannel_token_delivery_mode` (poll or
 * ping; push is not offered) and, for ping, `backchannel_client_notification_endpoint` (https,
 * or http on a loopback host while developing, as the other URLs we fetch). Checked before
 * oauth-provider registers the client, stored on its row after, and echoed in the answer.
 */
export function cibaRegistrationHooks(options: { development: boolean }): { before: Hook; after: Hook } {
  const isRegistration = (ctx: { path?: string }) => ctx.path === AUTH_PATHS.register;
  const before: Hook = {
    matcher: isRegistration,
    handler: createAuthMiddleware(async (ctx) => {
      const body = bodyOf(ctx);
      if (!body) return;
      const mode = body.backchannel_token_delivery_mode;
      const endpoint = body.backchannel_client_notification_endpoint;
      if (mode === undefined && endpoint === undefined) return;
      if (mode !== "poll" && mode !== "ping") invalidMetadata("backchannel_token_delivery_mode must be poll or ping");
      const grants = Array.isArray(body.grant_types) ? body.grant_types : [];
      if (!grants.includes(CIBA_GRANT)) invalidMetadata(`backchannel_token_delivery_mode needs grant_types to include ${CIBA_GRANT}`);
      if (mode === "ping") {
        if (typeof endpoint !== "string" || !isPublicHttpsUrl(endpoint, { loopbackHttp: options.development })) {
          invalidMetadata(`backchannel_client_notification_endpoint must be an https URL${options.development ? " (or http on a loopback host while developing)" : ""}`);
        }
      } else if (endpoint !== undefined) invalidMetadata("backchannel_client_notification_endpoint is for ping mode only");
    }),
  };
  const after: Hook = {
    matcher: isRegistration,
    handler: createAuthMiddleware(async (ctx) => {
      const returned = ctx.context.returned as Record<string, unknown> | undefined;
      const body = bodyOf(ctx);
      if (!body || !returned || returned instanceof Response || typeof returned.client_id !== "string") return;
      const mode = body.backchannel_token_delivery_mode;
      if (mode !== "poll" && mode !== "ping") return;
      const endpoint = mode === "ping" ? (body.backchannel_client_notification_endpoint as string) : null;
      await updateClientRow(ctx.context.adapter, returned.client_id, { backchannelTokenDeliveryMode: mode, backchannelClientNotificationEndpoint: endpoint });
      return ctx.json({ ...returned, backchannel_token_delivery_mode: mode, ...(endpoint ? { backchannel_client_notification_endpoint: endpoint } : {}) });
    }),
  };
  return { before, after };
}
