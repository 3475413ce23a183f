import { CodeEntryForm, DecisionForm, DonePage, ErrorNote, Layout } from "./layout.js";

export interface PendingCapability {
  name: string;
  description: string | null;
  reason: string | null;
  constraints: unknown;
}

/** A CIBA request waiting for this person (agent-auth's /agent/ciba/pending). */
export interface BoundRequest {
  approvalId: string;
  agentName: string | null;
  capabilities: string[];
  bindingMessage: string | null;
}

/** Entry: the code an agent showed, plus any requests already addressed to this account. */
export function AgentCodeEntryPage(props: { code?: string; error?: string | null; requests?: BoundRequest[] }) {
  return (
    <Layout title="Approve an agent">
      <h1>Approve an agent</h1>
      <ErrorNote message={props.error} />
      <p>Enter the code the agent gave you.</p>
      <CodeEntryForm action="/agents/approve" name="code" code={props.code} />
      {props.requests?.length ? (
        <section>
          <h2>Waiting for you</h2>
          {props.requests.map((r) => (
            <DecisionForm action="/agents/approve" fields={{ approval_id: r.approvalId }} yes="approve" yesLabel="Approve">
              <p>
                <strong>{r.agentName ?? "An agent"}</strong> asks for: {r.capabilities.join(", ") || "access to your account"}
                {r.bindingMessage ? <span class="muted"> ({r.bindingMessage})</span> : null}
              </p>
            </DecisionForm>
          ))}
        </section>
      ) : null}
    </Layout>
  );
}

/** Who asks for what; the person approves or denies. */
export function AgentConfirmPage(props: { agentId: string; agentName: string; hostName: string | null; code: string; bindingMessage: string | null; capabilities: PendingCapability[]; newAgent: boolean }) {
  return (
    <Layout title={`Approve ${props.agentName}?`}>
      <h1>Approve {props.agentName}?</h1>
      {props.hostName ? <p class="muted">Running on {props.hostName}</p> : null}
      <p>
        Check that the agent shows this code: <strong id="agent-code">{props.code}</strong>.
      </p>
      {props.bindingMessage ? <p class="muted">{props.bindingMessage}</p> : null}
      {props.newAgent ? <p>This agent will act for your account.</p> : null}
      {props.capabilities.length ? (
        <>
          <p>It asks to:</p>
          <ul class="scopes">
            {props.capabilities.map((c) => (
              <li>
                {c.description ?? c.name} <span class="muted">({c.name}{c.constraints ? `, limited to ${JSON.stringify(c.constraints)}` : ""})</span>
                {c.reason ? <div class="muted">Reason given: {c.reason}</div> : null}
              </li>
            ))}
          </ul>
        </>
      ) : null}
      <DecisionForm action="/agents/approve" fields={{ agent_id: props.agentId, user_code: props.code }} yes="approve" yesLabel="Approve" />
    </Layout>
  );
}

export const AgentDonePage = (props: { approved: boolean }) => (
  <DonePage
    approved={props.approved}
    approvedTitle="Agent approved"
    approvedText="The agent can now do what you approved. You can pause or revoke it from your account at any time."
    deniedText="The agent was not given access. You can close this page."
  />
);
