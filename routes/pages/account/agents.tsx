import { Hono, type Context } from "hono";
import type { Kysely } from "kysely";
import type { Auth } from "../../../auth.config.js";
import * as manage from "../../../plugins/agents/store.js";
import type { PageKit } from "../page-kit.js";
import { accountActions } from "./actions.js";
import { Section, When } from "./format.js";
import type { NoticeKey } from "./messages.js";

/*
 * The account page's "Agents" section: the person's agent hosts, the agents on them (or bound
 * to the person) and each agent's capability grants, with plain forms to pause, resume and
 * revoke hosts and agents and to revoke a grant. Reading and every change go through
 * plugins/agents/store.ts, the same functions as GET /api/agents and POST /api/agents/...
 * (routes/agents.ts), so ownership, the pause/resume state machine and revoke cascades are
 * one code path for the page and the API.
 */

export interface AgentAccessDeps {
  auth: Auth;
  db: Kysely<any>;
}

/** What the section shows: listAgentEstate's answer for the signed-in person. */
export type AgentAccessView = Awaited<ReturnType<typeof manage.listAgentEstate>>;

export async function loadAgentAccess(deps: AgentAccessDeps, userId: string): Promise<AgentAccessView> {
  return manage.listAgentEstate(deps.db, userId);
}

const ANCHOR = "agents";
const BASE = "/account/agents";

const at = (iso: string | null) => (iso ? new Date(iso) : null);
const canPause = (status: string) => status === "active";
const canResume = (status: string) => status === "paused";
const hostRevocable = (status: string) => status !== "revoked";
const agentRevocable = (status: string) => status !== "revoked";
const grantRevocable = (status: string) => status === "active" || status === "pending";

/** One small form with a hidden id and a button whose accessible name says what and which. */
function ActionForm(props: { action: string; field: string; id: string; label: string; text: string; secondary?: boolean }) {
  return (
    <form method="post" action={props.action} class="inline">
      <input type="hidden" name={props.field} value={props.id} />
      <button type="submit" class={props.secondary ? "secondary" : undefined} aria-label={props.label}>
        {props.text}
      </button>
    </form>
  );
}

function StateControls(props: { kind: "host" | "agent"; id: string; name: string; status: string }) {
  const path = `${BASE}/${props.kind === "host" ? "hosts" : "agents"}`;
  const field = `${props.kind}_id`;
  const revocable = props.kind === "host" ? hostRevocable(props.status) : agentRevocable(props.status);
  return (
    <>
      {canPause(props.status) ? <ActionForm action={`${path}/pause`} field={field} id={props.id} label={`Pause ${props.kind} ${props.name}`} text="Pause" secondary /> : null}
      {canResume(props.status) ? <ActionForm action={`${path}/resume`} field={field} id={props.id} label={`Resume ${props.kind} ${props.name}`} text="Resume" /> : null}
      {revocable ? <ActionForm action={`${path}/revoke`} field={field} id={props.id} label={`Revoke ${props.kind} ${props.name}`} text="Revoke" secondary /> : null}
    </>
  );
}

function HostsTable(props: { hosts: manage.HostView[] }) {
  return (
    <table>
      <thead>
        <tr>
          <th scope="col">Host</th>
          <th scope="col">Status</th>
          <th scope="col">Last used</th>
          <th scope="col">
            <span class="muted">Action</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {props.hosts.map((h) => {
          const name = h.name ?? "Unnamed host";
          return (
            <tr data-host-id={h.id}>
              <td>
                {name}
                {h.defaultCapabilities.length ? <div class="muted">By default: {h.defaultCapabilities.join(", ")}</div> : null}
              </td>
              <td data-status={h.status}>{h.status}</td>
              <td>{h.lastUsedAt ? <When at={at(h.lastUsedAt)} /> : <span class="muted">never</span>}</td>
              <td>
                <StateControls kind="host" id={h.id} name={name} status={h.status} />
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

function AgentCard(props: { agent: manage.AgentView; hostName: string | null }) {
  const a = props.agent;
  // What the agent may do (or is waiting to): revoked and denied grants are history, not shown.
  const grants = a.grants.filter((g) => grantRevocable(g.status));
  return (
    <article data-agent-id={a.id} aria-labelledby={`agent-${a.id}-title`}>
      <h3 id={`agent-${a.id}-title`}>
        {a.name}{" "}
        <span class="muted">
          · <span data-status={a.status}>{a.status}</span> · {a.mode}
          {props.hostName ? ` · on ${props.hostName}` : null}
        </span>
      </h3>
      <p class="muted">
        Last used: {a.lastUsedAt ? <When at={at(a.lastUsedAt)} /> : "never"}
        {a.expiresAt ? (
          <>
            {" "}
            · expires <When at={at(a.expiresAt)} />
          </>
        ) : null}
      </p>
      <p>
        <StateControls kind="agent" id={a.id} name={a.name} status={a.status} />
      </p>
      {grants.length ? (
        <table>
          <thead>
            <tr>
              <th scope="col">Capability</th>
              <th scope="col">Status</th>
              <th scope="col">Expires</th>
              <th scope="col">
                <span class="muted">Action</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {grants.map((g) => (
              <tr data-grant-id={g.id}>
                <td>
                  <code>{g.capability}</code>
                </td>
                <td data-status={g.status}>{g.status}</td>
                <td>{g.expiresAt ? <When at={at(g.expiresAt)} /> : <span class="muted">no expiry</span>}</td>
                <td>
                  <ActionForm action={`${BASE}/grants/revoke`} field="grant_id" id={g.id} label={`Revoke ${g.capability} for ${a.name}`} text="Revoke" secondary />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p class="muted">This agent may do nothing for you.</p>
      )}
    </article>
  );
}

export function AgentAccessSection(props: { view: AgentAccessView }) {
  const { hosts, agents } = props.view;
  const hostNames = new Map(hosts.map((h) => [h.id, h.name ?? "Unnamed host"]));
  return (
    <Section id="agents" title="Agents">
      <p class="muted">
        AI agents you let act for you, the hosts they run on and what they may do. Pausing stops an agent (or every agent on a host) until you resume it; revoking is for good.
      </p>
      <h3>Hosts</h3>
      {hosts.length ? <HostsTable hosts={hosts} /> : <p class="muted">You have no agent hosts.</p>}
      <h3>Agents</h3>
      {agents.length ? agents.map((a) => <AgentCard agent={a} hostName={hostNames.get(a.hostId) ?? null} />) : <p class="muted">No agent acts for you.</p>}
    </Section>
  );
}

/**
 * POST routes for pausing, resuming and revoking hosts and agents and revoking grants; mounted
 * at /account/agents. Each form names one row by id; someone else's (or a missing) row reads
 * NOT_FOUND, a change that no longer applies (already paused, revoked meanwhile) INVALID_STATE.
 */
export function agentAccountRoutes(kit: PageKit, deps: AgentAccessDeps) {
  const app = new Hono();
  const act = accountActions(kit);
  const { db } = deps;

  const outcome = (ok: boolean, notice: NoticeKey) => (ok ? act.done(null, notice, ANCHOR) : act.failed(null, ANCHOR, "INVALID_STATE"));

  async function target(c: Context, field: string) {
    const session = await act.guard(c);
    if (session instanceof Response) return session;
    const id = (await kit.form(c))[field] ?? "";
    return { userId: session.user.id, id };
  }

  app.post("/hosts/:action{pause|resume|revoke}", async (c) => {
    const t = await target(c, "host_id");
    if (t instanceof Response) return t;
    const host = t.id ? await manage.findOwnedHost(db, t.userId, t.id) : null;
    if (!host) return act.failed(null, ANCHOR, "NOT_FOUND");
    const action = c.req.param("action");
    if (action === "revoke") {
      if (!hostRevocable(host.status)) return act.failed(null, ANCHOR, "INVALID_STATE");
      await manage.revokeHost(db, host.id);
      return act.done(null, "agent-host-revoked", ANCHOR);
    }
    if (action === "pause") return outcome(await manage.pauseHost(db, host.id), "agent-host-paused");
    return outcome(await manage.resumeHost(db, host.id), "agent-host-resumed");
  });

  app.post("/agents/:action{pause|resume|revoke}", async (c) => {
    const t = await target(c, "agent_id");
    if (t instanceof Response) return t;
    const agent = t.id ? await manage.findOwnedAgent(db, t.userId, t.id) : null;
    if (!agent) return act.failed(null, ANCHOR, "NOT_FOUND");
    const action = c.req.param("action");
    if (action === "revoke") {
      if (!agentRevocable(agent.status)) return act.failed(null, ANCHOR, "INVALID_STATE");
      await manage.revokeAgent(db, agent.id);
      return act.done(null, "agent-revoked", ANCHOR);
    }
    if (action === "pause") return outcome(await manage.pauseAgent(db, agent.id), "agent-paused");
    return outcome(await manage.resumeAgent(db, agent.id), "agent-resumed");
  });

  app.post("/grants/revoke", async (c) => {
    const t = await target(c, "grant_id");
    if (t instanceof Response) return t;
    const grant = t.id ? await manage.findOwnedGrant(db, t.userId, t.id) : null;
    if (!grant) return act.failed(null, ANCHOR, "NOT_FOUND");
    return outcome(await manage.revokeGrant(db, grant.id), "agent-grant-revoked");
  });

  return app;
}
