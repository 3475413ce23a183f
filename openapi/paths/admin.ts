import { AuditLogQuery } from "../../routes/admin/audit-log.js";
import { jsonResponse, problemResponses, queryParameters, SESSION, UNAUTHORIZED, type Paths } from "../components.js";

const AuditEvent = {
  type: "object",
  required: ["id", "at", "event", "userId", "clientId", "ip", "requestId", "detail"],
  properties: {
    id: { type: "string" },
    at: { type: "string", format: "date-time" },
    event: { type: "string" },
    userId: { type: ["string", "null"] },
    clientId: { type: ["string", "null"] },
    ip: { type: ["string", "null"] },
    requestId: { type: ["string", "null"] },
    detail: { type: ["object", "null"] },
  },
};

/** routes/admin/audit-log.ts: the audit log, for administrators. */
export const adminPaths: Paths = {
  "/api/admin/audit-log": {
    get: {
      tags: ["Administration"],
      summary: "Security events, newest first (administrators only)",
      security: SESSION,
      parameters: queryParameters(AuditLogQuery),
      responses: {
        200: jsonResponse("The events.", { type: "object", required: ["events"], properties: { events: { type: "array", items: AuditEvent } } }),
        ...problemResponses({ 400: "Invalid query; `errors` names each parameter.", ...UNAUTHORIZED, 403: "Not an administrator." }),
      },
    },
  },
};
