import { Hono } from "hono";
import type { Kysely } from "kysely";
import * as agentStore from "../../../plugins/agents/store.js";
import { readForm } from "../form-replay.js";
import type { PageContext, PageEnv } from "../page-env.js";
import { AccountTable, PostButton } from "./account-table.js";
import { Section, When } from "./format.js";
import type { NoticeKey } from "./messages.js";
import { accountForm, backWith, backWithError, backWithNotice } from "./outcome.js";
import type { Database } from "../../../lib/db/tables.js";

/*
 * The account page's "Agents" section: the person's agent hosts, the agents on them (or bound
 * to the person) and each agent's capability grants, with plain forms to pause, resume and
 * revoke hosts and agents and to revoke a grant. Reading and every change go through
 * plugins/agents/agentStore.ts, the same functions as GET /api/agents and POST /api/agents/...
 * (routes/agents/agents.ts), so ownership, the pause/resume state machine and revoke cascades are
 * one code path for the page and the API.
 */

/** What the section shows: listAgentEstate's answer for the signed-in person. */
export type AgentAccessView = Awaited<ReturnType<typeof agentStore.listAgentEstate>>;

export async function loadAgentAccess(db: Kysely<Database>, userId: string): Promise<AgentAccessView> {
  return agentStore.listAgentEstate(db, userId);
}

const ANCHOR = "agents";
const BASE = "/account/agents";

const at = (iso: string | null) => (iso ? new Date(iso) : null);
const canPause = (status: string) => status === "active";
const canResume = (status: string) => status === "paused";
const hostRevocable = (status: string) => status !== "revoked";
const agentRevocable = (status: string) => status !== "revoked";
const grantRevocable = (status: string) => status === "active" || status === "pending";

function StateControls(props: { kind: "host" | "agent"; id: string; name: string; status: string }) {
  const path = `${BASE}/${props.kind === "host" ? "hosts" : "agents"}`;
  const fields = { [`${props.kind}_id`]: props.id };
  const revocable = props.kind === "host" ? hostRevocable(props.status) : agentRevocable(props.status);
  return (
    <>
      {canPause(props.status) ? <PostButton action={`${path}/pause`} fields={fields} label={`Pause ${props.kind} ${props.name}`} text="Pause" /> : null}
      {canResume(props.status) ? <PostButton action={`${path}/resume`} fields={fields} label={`Resume ${props.kind} ${props.name}`} text="Resume" primary /> : null}
      {revocable ? <PostButton action={`${path}/revoke`} fields={fields} label={`Revoke ${props.kind} ${props.name}`} text="Revoke" /> : null}
    </>
  );
}

function HostsTable(props: { hosts: agentStore.HostView[] }) {
  return (
    <AccountTable columns={["Host", "Status", "Last used"]} actions="Action">
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
    </AccountTable>
  );
}

function AgentCard(props: { agent: agentStore.AgentView; hostName: string | null }) {
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
        <AccountTable columns={["Capability", "Status", "Expires"]} actions="Action">
          {grants.map((g) => (
              <tr data-grant-id={g.id}>
                <td>
                  <code>{g.capability}</code>
                </td>
                <td data-status={g.status}>{g.status}</td>
                <td>{g.expiresAt ? <When at={at(g.expiresAt)} /> : <span class="muted">no expiry</span>}</td>
                <td>
                  <PostButton action={`${BASE}/grants/revoke`} fields={{ grant_id: g.id }} label={`Revoke ${g.capability} for ${a.name}`} text="Revoke" />
                </td>
              </tr>
          ))}
        </AccountTable>
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

const outcome = (ok: boolean, notice: NoticeKey) => backWith(ok, notice, ANCHOR, "INVALID_STATE");

/** The row id the form names; "" when it names none. */
const idFrom = async (c: PageContext, field: string) => (await readForm(c))[field] ?? "";

type Db = Kysely<Database>;

/** What pausing, resuming and revoking mean for a host and for an agent. */
const STATE_CHANGES = {
  host: {
    find: agentStore.findOwnedHost,
    revocable: hostRevocable,
    revoke: agentStore.revokeHost,
    pause: agentStore.pauseHost,
    resume: agentStore.resumeHost,
    notices: { revoke: "agent-host-revoked", pause: "agent-host-paused", resume: "agent-host-resumed" },
  },
  agent: {
    find: agentStore.findOwnedAgent,
    revocable: agentRevocable,
    revoke: agentStore.revokeAgent,
    pause: agentStore.pauseAgent,
    resume: agentStore.resumeAgent,
    notices: { revoke: "agent-revoked", pause: "agent-paused", resume: "agent-resumed" },
  },
} satisfies Record<"host" | "agent", {
  find(db: Db, userId: string, id: string): Promise<{ id: string; status: string } | null>;
  revocable(status: string): boolean;
  revoke(db: Db, id: string): Promise<unknown>;
  pause(db: Db, id: string): Promise<boolean>;
  resume(db: Db, id: string): Promise<boolean>;
  notices: Record<"revoke" | "pause" | "resume", NoticeKey>;
}>;

/** Pause, resume or revoke (the route's `:action`) a host or an agent the person owns. */
function changeState(kind: keyof typeof STATE_CHANGES) {
  const change = STATE_CHANGES[kind];
  return async (c: PageContext) => {
    const { db } = c.var.page;
    const id = await idFrom(c, `${kind}_id`);
    const row = id ? await change.find(db, c.var.session.user.id, id) : null;
    if (!row) return backWithError(null, ANCHOR, "NOT_FOUND");
    const action = c.req.param("action");
    if (action === "revoke") {
      if (!change.revocable(row.status)) return backWithError(null, ANCHOR, "INVALID_STATE");
      await change.revoke(db, row.id);
      return backWithNotice(null, change.notices.revoke, ANCHOR);
    }
    if (action === "pause") return outcome(await change.pause(db, row.id), change.notices.pause);
    return outcome(await change.resume(db, row.id), change.notices.resume);
  };
}

async function revokeGrant(c: PageContext) {
  const { db } = c.var.page;
  const id = await idFrom(c, "grant_id");
  const grant = id ? await agentStore.findOwnedGrant(db, c.var.session.user.id, id) : null;
  if (!grant) return backWithError(null, ANCHOR, "NOT_FOUND");
  return outcome(await agentStore.revokeGrant(db, grant.id), "agent-grant-revoked");
}

/**
 * POST routes for pausing, resuming and revoking hosts and agents and revoking grants; mounted
 * at /account/agents. Each form names one row by id; someone else's (or a missing) row reads
 * NOT_FOUND, a change that no longer applies (already paused, revoked meanwhile) INVALID_STATE.
 */
export const agentAccountRoutes = new Hono<PageEnv>()
  .post("/hosts/:action{pause|resume|revoke}", ...accountForm, changeState("host"))
  .post("/agents/:action{pause|resume|revoke}", ...accountForm, changeState("agent"))
  .post("/grants/revoke", ...accountForm, revokeGrant);
