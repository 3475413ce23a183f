import type { BetterAuthPluginDBSchema } from "@better-auth/core/db";

/**
 * The audit log (issue 12, Observability): one row per security event. No foreign keys: a row
 * outlives the user, client or session it names, which is the point of an audit trail.
 * `detail` is a small JSON object of facts (method, reason, scopes), never a credential.
 */
export const auditSchema = {
  auditEvent: {
    fields: {
      at: { type: "date", required: true, index: true },
      /** What happened: one of AUDIT_EVENTS (plugins/audit/store.ts). */
      event: { type: "string", required: true, index: true },
      userId: { type: "string", required: false, index: true },
      /** The OAuth client's public client_id, when the event concerns one. */
      clientId: { type: "string", required: false },
      /** The caller's address as our server saw it (lib/client-address.ts CLIENT_IP_HEADER). */
      ip: { type: "string", required: false },
      /** The X-Request-Id of the request that caused it (lib/logger.ts requestContext). */
      requestId: { type: "string", required: false },
      detail: { type: "string", required: false },
    },
  },
} satisfies BetterAuthPluginDBSchema;
