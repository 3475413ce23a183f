import { AGENT_AUTH_ERROR_CODES, agentError } from "@better-auth/agent-auth";
import { createAuthMiddleware, getSessionFromCtx } from "better-auth/api";
import { hashUserCode, normalizeAgentUserCode } from "./approval-lookup.js";

/**
 * Who may answer an approval request (agent-auth's /agent/approve-capability). agent-auth
 * checks the user code for a device-style approval only when the answer is "approve": a
 * "deny" needs no code, so any signed-in user who learnt an agent id could reject another
 * person's pending agent (force_approval leaves it without a userId) and become its `userId`.
 * Here either answer needs one of: being the person the request concerns (the agent's user,
 * its host's user, or the user a pending request names), or the request's user code (the
 * device flow's proof that the host showed the code to this person, RFC 8628 §3.3).
 */

interface Row {
  id: string;
  agentId?: string | null;
  hostId?: string | null;
  userId?: string | null;
  userCodeHash?: string | null;
}

export function approvalGuard() {
  return {
    matcher: (ctx: { path?: string }) => ctx.path === "/agent/approve-capability",
    handler: createAuthMiddleware(async (ctx) => {
      const session = await getSessionFromCtx(ctx);
      if (!session) return; // the endpoint answers 401
      const body = (ctx.body ?? {}) as { agent_id?: unknown; approval_id?: unknown; user_code?: unknown };
      const adapter = ctx.context.adapter;
      const byId = (model: string, id: unknown) => (typeof id === "string" ? adapter.findOne<Row>({ model, where: [{ field: "id", value: id }] }) : Promise.resolve(null));
      const agentId = typeof body.approval_id === "string" ? (await byId("approvalRequest", body.approval_id))?.agentId : body.agent_id;
      const agent = await byId("agent", agentId);
      if (!agent) return; // 400/404 from the endpoint
      const pending = await adapter.findMany<Row>({ model: "approvalRequest", where: [{ field: "agentId", value: agent.id }, { field: "status", value: "pending" }] });
      const host = await byId("agentHost", agent.hostId);
      const people = new Set([agent.userId, host?.userId, ...pending.map((r) => r.userId)].filter(Boolean));
      if (people.has(session.user.id)) return;
      const code = typeof body.user_code === "string" ? normalizeAgentUserCode(body.user_code) : null;
      if (code && pending.some((r) => r.userCodeHash === hashUserCode(code))) return;
      throw agentError("FORBIDDEN", AGENT_AUTH_ERROR_CODES.CAPABILITY_REQUEST_OWNER_MISMATCH, "Only the person this request is for, or who holds its code, may answer it.");
    }),
  };
}
