import { Hono, type Context } from "hono";
import type { Kysely } from "kysely";
import { problem, problems } from "../../lib/errors.js";
import { CLIENT_IP_HEADER } from "../../lib/client-address.js";
import * as agentStore from "../../plugins/agents/store.js";
import { recordAuditEvent } from "../../plugins/audit/store.js";
import { PROBLEM_CODES } from "../../lib/problem-codes.js";
import type { AgentRouteDeps } from "./deps.js";
import { createHostClient, HOST_CLIENT_PATH } from "./host-client.js";
import { refuseOtherSites, signedIn, type RouteEnv } from "../middleware.js";
import type { Database } from "../../lib/db/tables.js";

/**
 * The owner's controls over their agents (session only; the account page builds on these):
 *
 *   GET  /api/agents                          hosts, and agents with their grants
 *   POST /api/agents/hosts/{id}/pause|resume|revoke
 *   POST /api/agents/agents/{id}/pause|resume|revoke
 *   POST /api/agents/grants/{id}/revoke
 *   POST /api/agents/hosts/{id}/oauth-client    the host as a private_key_jwt client (./host-client.ts)
 *
 * Someone else's host, agent or grant answers 404, like a missing one. A state change that
 * does not apply (resuming an active agent, revoking a revoked grant) answers 409.
 */

type AgentEnv = RouteEnv<AgentRouteDeps>;

const STATE_CHANGE = "/:kind{hosts|agents}/:id/:action{pause|resume|revoke}";
const GRANT_REVOKE = "/grants/:id/revoke";

const conflict = (detail: string) => problem(PROBLEM_CODES.INVALID_STATE, { detail });

/** The cookie alone must not revoke anything from another site. */
const notFromOtherSites = refuseOtherSites<AgentEnv>((c) => c.var.deps.authUrl);

async function listEstate(c: Context<AgentEnv>) {
  return c.json(await agentStore.listAgentEstate(c.var.deps.db, c.var.session.user.id));
}

/** What a state change does to a host or an agent: the same steps, its own queries. */
interface StateTarget {
  noun: string;
  missing: string;
  find: (db: Kysely<Database>, userId: string, id: string) => Promise<{ id: string; status: string } | null>;
  pause: (db: Kysely<Database>, id: string) => Promise<boolean>;
  resume: (db: Kysely<Database>, id: string) => Promise<boolean>;
  /** Extra fields of the answer (revoking a host revokes its agents too). */
  revoke: (db: Kysely<Database>, id: string) => Promise<object>;
}

const HOSTS: StateTarget = {
  noun: "host",
  missing: "You have no agent host with that id.",
  find: agentStore.findOwnedHost,
  pause: agentStore.pauseHost,
  resume: agentStore.resumeHost,
  revoke: async (db, id) => ({ agentsRevoked: await agentStore.revokeHost(db, id) }),
};
const AGENTS: StateTarget = {
  noun: "agent",
  missing: "You have no agent with that id.",
  find: agentStore.findOwnedAgent,
  pause: agentStore.pauseAgent,
  resume: agentStore.resumeAgent,
  revoke: async (db, id) => {
    await agentStore.revokeAgent(db, id);
    return {};
  },
};

async function changeState(c: Context<AgentEnv, typeof STATE_CHANGE>) {
  const { db } = c.var.deps;
  const target = c.req.param("kind") === "hosts" ? HOSTS : AGENTS;
  const row = await target.find(db, c.var.session.user.id, c.req.param("id"));
  if (!row) throw problems.notFound(target.missing);
  const action = c.req.param("action");
  if (action === "revoke") {
    if (row.status === "revoked") throw conflict(`This ${target.noun} is already revoked.`);
    const answer = { id: row.id, status: "revoked", ...(await target.revoke(db, row.id)) };
    const detail = target === HOSTS ? { hostId: row.id } : { agentId: row.id };
    await recordAuditEvent(db, c.var.deps.logger, { event: "agent.revoked", userId: c.var.session.user.id, ip: c.req.header(CLIENT_IP_HEADER) ?? null, detail: { ...detail, by: "owner" } });
    return c.json(answer);
  }
  const changed = action === "pause" ? await target.pause(db, row.id) : await target.resume(db, row.id);
  if (!changed) throw conflict(action === "pause" ? `Only an active ${target.noun} can be paused.` : `Only a paused ${target.noun} can be resumed.`);
  return c.json({ id: row.id, status: action === "pause" ? "paused" : "active" });
}

async function revokeGrant(c: Context<AgentEnv, typeof GRANT_REVOKE>) {
  const { db } = c.var.deps;
  const grant = await agentStore.findOwnedGrant(db, c.var.session.user.id, c.req.param("id"));
  if (!grant) throw problems.notFound("You have no capability grant with that id.");
  if (!(await agentStore.revokeGrant(db, grant.id))) throw conflict("Only an active or pending grant can be revoked.");
  await recordAuditEvent(db, c.var.deps.logger, { event: "agent.revoked", userId: c.var.session.user.id, ip: c.req.header(CLIENT_IP_HEADER) ?? null, detail: { agentId: grant.agentId, grantId: grant.id, by: "owner" } });
  return c.json({ id: grant.id, agentId: grant.agentId, status: "revoked" });
}

/** Mounted at /api/agents. */
export const agentRoutes = new Hono<AgentEnv>()
  .post("*", notFromOtherSites)
  .get("/", signedIn, listEstate)
  .post(STATE_CHANGE, signedIn, changeState)
  .post(GRANT_REVOKE, signedIn, revokeGrant)
  .post(HOST_CLIENT_PATH, signedIn, createHostClient);
