import { Hono } from "hono";
import { normalizeAgentUserCode } from "../../plugins/agents/approval-lookup.js";
import { AgentCodeEntryPage, AgentConfirmPage, AgentDonePage, type BoundRequest, type PendingCapability } from "./agent-approval-page.js";
import { callAuth, getFromAuth, readForm } from "./form-replay.js";
import { ownPagesOnly, signInFirst, type PageContext, type PageEnv } from "./page-env.js";
import { html } from "./render.js";
import { signInThenBack } from "./return-to.js";

interface Lookup {
  approval_id: string;
  agent_id: string;
  agent_name: string;
  agent_status: string;
  host_name: string | null;
  binding_message: string | null;
  user_code: string;
  capabilities: PendingCapability[];
}

const TOO_MANY = "Too many attempts. Wait a minute and try again.";
const INVALID = "That code is not valid, or has expired. Ask the agent for a new one.";

const approvePath = (code?: string | null) => (code ? `/agents/approve?${new URLSearchParams({ code })}` : "/agents/approve");

async function boundRequests(c: PageContext): Promise<BoundRequest[]> {
  const pending = await c.var.page.auth.api.cibaPending({ headers: c.req.raw.headers }).catch(() => null);
  return (pending?.requests ?? [])
    .filter((r) => r.method === "ciba")
    .map((r) => ({ approvalId: r.approval_id, agentName: r.agent_name, capabilities: r.capabilities, bindingMessage: r.binding_message }));
}

async function showApproval(c: PageContext) {
  const typed = c.req.query("code");
  if (!typed) return html(c, <AgentCodeEntryPage requests={await boundRequests(c)} />);
  const code = normalizeAgentUserCode(typed);
  if (!code) return html(c, <AgentCodeEntryPage code={typed} error={INVALID} />, 400);
  const res = await getFromAuth(c, "/agent-approval", { user_code: code });
  if (res.status === 429) return html(c, <AgentCodeEntryPage code={code} error={TOO_MANY} />, 429);
  const found = res.ok ? ((await res.json()) as Lookup) : null;
  const agentId = c.req.query("agent_id");
  if (!found || (agentId && agentId !== found.agent_id)) return html(c, <AgentCodeEntryPage code={code} error={INVALID} />, 400);
  return html(
    c,
    <AgentConfirmPage agentId={found.agent_id} agentName={found.agent_name} hostName={found.host_name} code={found.user_code} bindingMessage={found.binding_message} capabilities={found.capabilities} newAgent={found.agent_status === "pending"} />,
  );
}

async function decideApproval(c: PageContext) {
  const f = await readForm(c);
  const approve = f.decision === "approve";
  const code = f.user_code ? normalizeAgentUserCode(f.user_code) : null;
  const target = f.approval_id ? { approval_id: f.approval_id } : f.agent_id && code ? { agent_id: f.agent_id, user_code: code } : null;
  if (!target) return html(c, <AgentCodeEntryPage error={INVALID} />, 400);
  const res = await callAuth(c, "/agent/approve-capability", { ...target, action: approve ? "approve" : "deny" });
  if (res.status === 401) return c.redirect(signInThenBack(approvePath(code)), 303);
  if (!res.ok) {
    const body = (await res.json().catch(() => null)) as { error?: unknown } | null;
    // Approving needs a recent sign-in (agent-auth's freshSessionWindow): sign in again, come back.
    if (body?.error === "fresh_session_required") return c.redirect(signInThenBack(approvePath(code)), 303);
    return html(c, <AgentCodeEntryPage code={code ?? undefined} error={res.status === 429 ? TOO_MANY : INVALID} />, res.status === 429 ? 429 : 400);
  }
  return html(c, <AgentDonePage approved={approve} />);
}

/**
 * /agents/approve: where a person approves or denies what an agent asks for (agent-auth's
 * `verification_uri`). Agents send people here with `?agent_id=…&code=XXXX-XXXX`; a person can
 * also type the code. CIBA requests addressed to the signed-in account are listed too.
 * The decision is agent-auth's own /agent/approve-capability, which checks the code, the
 * owner and session freshness (a session older than 5 minutes must sign in again).
 */
export const agentApprovalRoutes = new Hono<PageEnv>()
  .get("/agents/approve", signInFirst((c) => approvePath(c.req.query("code"))), showApproval)
  .post("/agents/approve", ownPagesOnly, decideApproval);
