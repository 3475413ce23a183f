import type { BetterAuthPluginDBSchema } from "@better-auth/core/db";

/**
 * CIBA (OpenID Client-Initiated Backchannel Authentication Core 1.0): one row per
 * authentication request, read and written only through ./store.ts. The row is the request's
 * whole state, so any instance behind a load balancer answers the poll, the page and the ping.
 * The client's `auth_req_id` is kept as its SHA-256 only; the row's own `id` names it on the
 * approval page and in the e-mail, never to the client.
 */
export const cibaSchema = {
  cibaRequest: {
    fields: {
      /** SHA-256 (base64url) of the `auth_req_id` the client holds. */
      authReqIdHash: { type: "string", required: true, unique: true },
      clientId: { type: "string", required: true },
      /** The person the request is for (`login_hint`). */
      userId: { type: "string", required: true, references: { model: "user", field: "id", onDelete: "cascade" }, index: true },
      /** With a BAP id as `login_hint`: the identity the tokens speak for. */
      referenceId: { type: "string", required: false },
      scope: { type: "string", required: true },
      bindingMessage: { type: "string", required: false },
      /** RFC 9396 `authorization_details`, as validated JSON text. */
      authorizationDetails: { type: "string", required: false },
      acrValues: { type: "string", required: false },
      /** The approval needs a passkey or identity-key sign-in (`acr_values` phr). */
      strong: { type: "boolean", required: true },
      /** pending, approved, denied, redeemed. */
      status: { type: "string", required: true },
      /** poll or ping (the client's registration). */
      deliveryMode: { type: "string", required: true },
      /** Ping mode: the bearer token of the client's notification (CIBA §7.1 `client_notification_token`). */
      notificationToken: { type: "string", required: false },
      /** Ping mode: the `auth_req_id` itself, encrypted with the server secret, for the notification's body. */
      pingAuthReqId: { type: "string", required: false },
      /** RFC 9449: the DPoP key the request was made with; the token request must prove the same one. */
      dpopJkt: { type: "string", required: false },
      /** Minimum seconds between polls; grows by 5 with each slow_down (CIBA §11). */
      interval: { type: "number", required: true },
      lastPolledAt: { type: "date", required: false },
      expiresAt: { type: "date", required: true },
      decidedAt: { type: "date", required: false },
      createdAt: { type: "date", required: true },
    },
  },
  oauthClient: {
    fields: {
      /** CIBA §4 registration metadata: poll or ping. */
      backchannelTokenDeliveryMode: { type: "string", required: false },
      /** CIBA §4: where ping notifications go. */
      backchannelClientNotificationEndpoint: { type: "string", required: false },
    },
  },
} satisfies BetterAuthPluginDBSchema;
