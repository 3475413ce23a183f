import { jsonResponse, pathParameter, problemResponses, SESSION, UNAUTHORIZED, type Paths } from "../components.js";

/** routes/agents/agents.ts: the signed-in user's agent hosts, agents and capability grants. */
const stateErrors = problemResponses({ ...UNAUTHORIZED, 403: "Refused from another site.", 404: "Not yours, or no such one.", 409: "Not in a state that allows it." });

export const agentsPaths: Paths = {
  "/api/agents": {
    get: { tags: ["Agents"], summary: "The signed-in user's agent hosts, agents and grants", security: SESSION, responses: { 200: jsonResponse("The estate."), ...problemResponses(UNAUTHORIZED) } },
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
      responses: { 200: jsonResponse("The new state."), ...stateErrors },
    },
  },
  "/api/agents/grants/{id}/revoke": {
    post: { tags: ["Agents"], summary: "Revoke a capability grant", security: SESSION, parameters: [pathParameter("id")], responses: { 200: jsonResponse("Revoked."), ...stateErrors } },
  },
};
