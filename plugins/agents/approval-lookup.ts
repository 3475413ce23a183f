import { createHash } from "node:crypto";
import { agentError } from "@better-auth/agent-auth";
import { createAuthEndpoint, sessionMiddleware } from "better-auth/api";
import * as v from "valibot";
import { AGENT_ERROR_CODES as CODES } from "./error-codes.js";

/** agent-auth's user code as it hashes it: 8 letters from the no-look-alike alphabet, XXXX-XXXX. */
export function normalizeAgentUserCode(input: string): string | null {
  const bare = input.replace(/[\s-]/g, "").toUpperCase();
  return /^[ABCDEFGHJKLMNPQRSTUVWXYZ23456789]{8}$/.test(bare) ? `${bare.slice(0, 4)}-${bare.slice(4)}` : null;
}

/** SHA-256, base64url without padding: how agent-auth stores `userCodeHash`. */
export const hashUserCode = (code: string) => createHash("sha256").update(code).digest("base64url");

interface ApprovalRow {
  id: string;
  agentId: string | null;
  hostId: string | null;
  status: string;
  expiresAt: Date | string;
  bindingMessage: string | null;
}
interface AgentRow {
  id: string;
  name: string;
  userId: string | null;
  hostId: string;
  status: string;
  mode: string;
}
interface GrantRow {
  capability: string;
  status: string;
  reason: string | null;
  constraints: unknown;
}

/**
 * GET /agent-approval?user_code=XXXX-XXXX (signed in): the pending device-style approval
 * request a person's code names, so our approval page can show who asks for what before the
 * person approves at agent-auth's /agent/approve-capability. agent-auth stores only the code's
 * hash and wants the agent id beside it; a person who typed just the code needs this lookup.
 * Guessing is rate limited per IP like the approve step (lib/limits.ts `approval`).
 * A request bound to another account answers like an unknown code.
 */
export function approvalLookup(describe: (name: string) => string | undefined) {
  return createAuthEndpoint(
    "/agent-approval",
    { method: "GET", query: v.object({ user_code: v.pipe(v.string(), v.maxLength(64)) }), use: [sessionMiddleware], metadata: { openapi: { description: "Look up the pending agent approval request a user code names." } } },
    async (ctx) => {
      const notFound = () => agentError("NOT_FOUND", CODES.APPROVAL_NOT_FOUND);
      const code = normalizeAgentUserCode(ctx.query.user_code);
      if (!code) throw notFound();
      const adapter = ctx.context.adapter;
      const approval = await adapter.findOne<ApprovalRow>({ model: "approvalRequest", where: [{ field: "userCodeHash", value: hashUserCode(code) }, { field: "status", value: "pending" }] });
      if (!approval?.agentId) throw notFound();
      const agent = await adapter.findOne<AgentRow>({ model: "agent", where: [{ field: "id", value: approval.agentId }] });
      if (!agent || (agent.userId && agent.userId !== ctx.context.session.user.id)) throw notFound();
      if (new Date(approval.expiresAt) <= new Date()) throw agentError("BAD_REQUEST", CODES.APPROVAL_EXPIRED);
      const host = agent.hostId ? await adapter.findOne<{ name: string | null }>({ model: "agentHost", where: [{ field: "id", value: agent.hostId }] }) : null;
      const grants = await adapter.findMany<GrantRow>({ model: "agentCapabilityGrant", where: [{ field: "agentId", value: agent.id }, { field: "status", value: "pending" }] });
      ctx.setHeader("Cache-Control", "no-store");
      return ctx.json({
        approval_id: approval.id,
        agent_id: agent.id,
        agent_name: agent.name,
        agent_status: agent.status,
        host_name: host?.name ?? null,
        binding_message: approval.bindingMessage,
        user_code: code,
        expires_at: new Date(approval.expiresAt).toISOString(),
        capabilities: grants.map((g) => ({ name: g.capability, description: describe(g.capability) ?? null, reason: g.reason, constraints: g.constraints ?? null })),
      });
    },
  );
}
