import { Hono, type Context } from "hono";
import type { Auth } from "../../auth.config.js";
import { BASE_PATH, CLIENT_IP_HEADER } from "../../lib/transport.js";
import { normalizeAgentUserCode } from "../../plugins/agents/approval-lookup.js";
import { ErrorPage } from "./consent.js";
import { AgentCodeEntryPage, AgentConfirmPage, AgentDonePage, type BoundRequest, type PendingCapability } from "./agent-approval-page.js";
import { pageKit } from "./page-kit.js";
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

/**
 * /agents/approve: where a person approves or denies what an agent asks for (agent-auth's
 * `verification_uri`). Agents send people here with `?agent_id=…&code=XXXX-XXXX`; a person can
 * also type the code. CIBA requests addressed to the signed-in account are listed too.
 * The decision is agent-auth's own /agent/approve-capability, which checks the code, the
 * owner and session freshness (a session older than 5 minutes must sign in again).
 */
export function agentApprovalRoutes({ auth, authUrl }: { auth: Auth; authUrl: string }) {
  const kit = pageKit(auth, authUrl);
  const app = new Hono();
  const back = (code?: string | null) => signInThenBack(code ? `/agents/approve?${new URLSearchParams({ code })}` : "/agents/approve");

  async function lookup(c: Context, code: string): Promise<Response> {
    const headers = new Headers({ accept: "application/json" });
    for (const name of ["cookie", CLIENT_IP_HEADER, "user-agent"]) {
      const value = c.req.header(name);
      if (value) headers.set(name, value);
    }
    return auth.handler(new Request(`${authUrl}${BASE_PATH}/agent-approval?${new URLSearchParams({ user_code: code })}`, { headers }));
  }

  async function boundRequests(headers: Headers): Promise<BoundRequest[]> {
    const pending = await auth.api.cibaPending({ headers }).catch(() => null);
    return (pending?.requests ?? [])
      .filter((r) => r.method === "ciba")
      .map((r) => ({ approvalId: r.approval_id, agentName: r.agent_name, capabilities: r.capabilities, bindingMessage: r.binding_message }));
  }

  app.get("/agents/approve", async (c) => {
    const typed = c.req.query("code");
    const session = await auth.api.getSession({ headers: c.req.raw.headers });
    if (!session) return c.redirect(back(typed), 303);
    if (!typed) return kit.html(c, <AgentCodeEntryPage requests={await boundRequests(c.req.raw.headers)} />);
    const code = normalizeAgentUserCode(typed);
    if (!code) return kit.html(c, <AgentCodeEntryPage code={typed} error={INVALID} />, 400);
    const res = await lookup(c, code);
    if (res.status === 429) return kit.html(c, <AgentCodeEntryPage code={code} error={TOO_MANY} />, 429);
    const found = res.ok ? ((await res.json()) as Lookup) : null;
    const agentId = c.req.query("agent_id");
    if (!found || (agentId && agentId !== found.agent_id)) return kit.html(c, <AgentCodeEntryPage code={code} error={INVALID} />, 400);
    return kit.html(
      c,
      <AgentConfirmPage agentId={found.agent_id} agentName={found.agent_name} hostName={found.host_name} code={found.user_code} bindingMessage={found.binding_message} capabilities={found.capabilities} newAgent={found.agent_status === "pending"} />,
    );
  });

  app.post("/agents/approve", async (c) => {
    if (!kit.sameOrigin(c)) return kit.html(c, <ErrorPage error="invalid_request" description="This form must be sent from our own page." />, 403);
    const f = await kit.form(c);
    const approve = f.decision === "approve";
    const code = f.user_code ? normalizeAgentUserCode(f.user_code) : null;
    const target = f.approval_id ? { approval_id: f.approval_id } : f.agent_id && code ? { agent_id: f.agent_id, user_code: code } : null;
    if (!target) return kit.html(c, <AgentCodeEntryPage error={INVALID} />, 400);
    const res = await kit.callAuth(c, "/agent/approve-capability", { ...target, action: approve ? "approve" : "deny" });
    if (res.status === 401) return c.redirect(back(code), 303);
    if (!res.ok) {
      const body = (await res.json().catch(() => null)) as { error?: unknown } | null;
      // Approving needs a recent sign-in (agent-auth's freshSessionWindow): sign in again, come back.
      if (body?.error === "fresh_session_required") return c.redirect(back(code), 303);
      return kit.html(c, <AgentCodeEntryPage code={code ?? undefined} error={res.status === 429 ? TOO_MANY : INVALID} />, res.status === 429 ? 429 : 400);
    }
    return kit.html(c, <AgentDonePage approved={approve} />);
  });

  return app;
}
