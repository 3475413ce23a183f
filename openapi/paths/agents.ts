import { ref, record } from "../schemas.js";
import { jsonResponse, pathParameter, problemResponses, SESSION, UNAUTHORIZED, type Paths } from "../components.js";

/** routes/agents/agents.ts: the signed-in user's agent hosts, agents and capability grants. */
const stateErrors = problemResponses({ 400: "A path segment is not valid.", ...UNAUTHORIZED, 403: "Refused from another site.", 404: "Not yours, or no such one.", 409: "Not in a state that allows it." });

export const agentsPaths: Paths = {
  "/api/agents": {
    get: { tags: ["Agents"], summary: "The signed-in user's agent hosts, agents and grants", security: SESSION, responses: { 200: jsonResponse("The estate.", record("Hosts, and agents with their grants.", { hosts: { type: "array", items: ref("AgentHostSummary") }, agents: { type: "array", items: ref("AgentSummary") } })), ...problemResponses(UNAUTHORIZED) } },
  },
  "/api/agents/{kind}/{id}/{action}": {
    post: {
      tags: ["Agents"],
      summary: "Pause, resume or revoke a host or an agent",
      security: SESSION,
      parameters: [
        { ...pathParameter("kind"), schema: { type: "string", enum: ["hosts", "agents"] } },
        pathParameter("id"),
        { ...pathParameter("action"), schema: { type: "string", enum: ["pause", "resume", "revoke"] } },
      ],
      responses: { 200: jsonResponse("The new state.", record("The host or agent.", { id: { type: "string" }, status: { type: "string", enum: ["active", "paused", "revoked"] } })), ...stateErrors },
    },
  },
  "/api/agents/grants/{id}/revoke": {
    post: { tags: ["Agents"], summary: "Revoke a capability grant", security: SESSION, parameters: [pathParameter("id")], responses: { 200: jsonResponse("Revoked.", record("The grant.", { id: { type: "string" }, agentId: { type: "string" }, status: { type: "string", const: "revoked" } })), ...stateErrors } },
  },
  "/api/agents/hosts/{id}/oauth-client": {
    post: {
      tags: ["Agents"],
      summary: "Make an enrolled host a private_key_jwt OAuth client (its key, no secret)",
      description: "Creates once, for the host's owner, a confidential client for client_credentials and token exchange whose only key is the host's enrolled key (RFC 7523 §2.2). Counts against the owner's tier limit. The host signs client assertions with its key.",
      security: SESSION,
      parameters: [pathParameter("id")],
      responses: {
        200: jsonResponse("The host's existing client.", ref("HostClient")),
        201: jsonResponse("Created.", ref("HostClient")),
        ...problemResponses({ ...UNAUTHORIZED, 403: "Refused from another site, or the tier's client limit is reached.", 404: "Not yours, or no such host.", 409: "The host is not active or has no usable key." }),
      },
    },
  },
};
