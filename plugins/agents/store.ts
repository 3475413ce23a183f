import type { Kysely } from "kysely";
import { asDate } from "../../lib/db/sqlite-values.js";
import { parseJsonOrNull } from "../../lib/json.js";
import type { Database } from "../../lib/db/tables.js";

/**
 * The owner's view of their agent hosts, agents and capability grants, and the owner's
 * controls: pause, resume, revoke (routes/agents/agents.ts; the account page uses the same
 * functions). Each takes `db` first. A host is the owner's when its `userId` is theirs; an
 * agent when its own `userId` is, or (not yet approved) its host's is.
 *
 * Pause is ours: agent-auth has no such state. A paused agent or host keeps its keys and
 * grants; every JWT naming it is refused (plugins/agents/hooks.ts) until it is resumed.
 * Revoke is agent-auth's: keys cleared, the agent (or all of a host's agents) revoked with
 * every grant, for good.
 */

type Db = Kysely<Database>;

const iso = (value: unknown) => (value === null || value === undefined ? null : asDate(value).toISOString());

/** Stored capability lists: agent-auth writes a JSON array, sometimes JSON-encoded twice. */
function capabilityList(raw: unknown): string[] {
  let value: unknown = typeof raw === "string" ? parseJsonOrNull(raw) : raw;
  if (typeof value === "string") value = parseJsonOrNull(value);
  return Array.isArray(value) ? value.filter((c): c is string => typeof c === "string") : [];
}

export interface GrantView {
  id: string;
  capability: string;
  status: string;
  constraints: unknown;
  grantedBy: string | null;
  expiresAt: string | null;
  createdAt: string | null;
}
export interface AgentView {
  id: string;
  name: string;
  hostId: string;
  status: string;
  mode: string;
  createdAt: string | null;
  activatedAt: string | null;
  lastUsedAt: string | null;
  expiresAt: string | null;
  grants: GrantView[];
}
export interface HostView {
  id: string;
  name: string | null;
  status: string;
  defaultCapabilities: string[];
  createdAt: string | null;
  activatedAt: string | null;
  lastUsedAt: string | null;
}

/** Everything the owner has: hosts, and agents (on those hosts or bound to the owner) with their grants. */
export async function listAgentEstate(db: Db, userId: string): Promise<{ hosts: HostView[]; agents: AgentView[] }> {
  const hosts = await db.selectFrom("agentHost").selectAll().where("userId", "=", userId).orderBy("createdAt", "desc").execute();
  const hostIds = hosts.map((h) => h.id as string);
  let agentQuery = db.selectFrom("agent").selectAll();
  agentQuery = hostIds.length ? agentQuery.where((eb) => eb.or([eb("userId", "=", userId), eb("hostId", "in", hostIds)])) : agentQuery.where("userId", "=", userId);
  const agents = await agentQuery.orderBy("createdAt", "desc").execute();
  const agentIds = agents.map((a) => a.id as string);
  const grants = agentIds.length ? await db.selectFrom("agentCapabilityGrant").selectAll().where("agentId", "in", agentIds).orderBy("createdAt", "asc").execute() : [];
  return {
    hosts: hosts.map((h) => ({
      id: h.id,
      name: h.name ?? null,
      status: h.status,
      defaultCapabilities: capabilityList(h.defaultCapabilities),
      createdAt: iso(h.createdAt),
      activatedAt: iso(h.activatedAt),
      lastUsedAt: iso(h.lastUsedAt),
    })),
    agents: agents.map((a) => ({
      id: a.id,
      name: a.name,
      hostId: a.hostId,
      status: a.status,
      mode: a.mode,
      createdAt: iso(a.createdAt),
      activatedAt: iso(a.activatedAt),
      lastUsedAt: iso(a.lastUsedAt),
      expiresAt: iso(a.expiresAt),
      grants: grants
        .filter((g) => g.agentId === a.id)
        .map((g) => ({
          id: g.id,
          capability: g.capability,
          status: g.status,
          constraints: typeof g.constraints === "string" ? parseJsonOrNull(g.constraints) : (g.constraints ?? null),
          grantedBy: g.grantedBy ?? null,
          expiresAt: iso(g.expiresAt),
          createdAt: iso(g.createdAt),
        })),
    })),
  };
}

export async function findOwnedHost(db: Db, userId: string, hostId: string): Promise<{ id: string; status: string } | null> {
  const row = await db.selectFrom("agentHost").select(["id", "status"]).where("id", "=", hostId).where("userId", "=", userId).executeTakeFirst();
  return (row as { id: string; status: string } | undefined) ?? null;
}

export async function findOwnedAgent(db: Db, userId: string, agentId: string): Promise<{ id: string; status: string } | null> {
  const row = await db
    .selectFrom("agent")
    .leftJoin("agentHost", "agentHost.id", "agent.hostId")
    .select(["agent.id as id", "agent.status as status", "agent.userId as userId", "agentHost.userId as hostUserId"])
    .where("agent.id", "=", agentId)
    .executeTakeFirst();
  if (!row || (row.userId ?? row.hostUserId) !== userId) return null;
  return { id: row.id, status: row.status };
}

export async function findOwnedGrant(db: Db, userId: string, grantId: string): Promise<{ id: string; status: string; agentId: string } | null> {
  const grant = await db.selectFrom("agentCapabilityGrant").select(["id", "status", "agentId"]).where("id", "=", grantId).executeTakeFirst();
  if (!grant || !(await findOwnedAgent(db, userId, grant.agentId))) return null;
  return grant as { id: string; status: string; agentId: string };
}

/**
 * Moves a row from one status to another, only if it is still in the first: a concurrent
 * change (a revoke racing a pause) wins, and the caller learns it did not happen.
 */
async function transition(db: Db, table: "agent" | "agentHost", id: string, from: string, to: string): Promise<boolean> {
  const result = await db.updateTable(table).set({ status: to, updatedAt: new Date() }).where("id", "=", id).where("status", "=", from).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export const pauseAgent = (db: Db, id: string) => transition(db, "agent", id, "active", "paused");
export const resumeAgent = (db: Db, id: string) => transition(db, "agent", id, "paused", "active");
export const pauseHost = (db: Db, id: string) => transition(db, "agentHost", id, "active", "paused");
export const resumeHost = (db: Db, id: string) => transition(db, "agentHost", id, "paused", "active");

/** Revokes agents and every one of their grants, keys cleared (as agent-auth's /agent/revoke does). */
async function revokeAgentsIn(trx: Db, agentIds: string[], now: Date): Promise<void> {
  if (!agentIds.length) return;
  await trx.updateTable("agent").set({ status: "revoked", publicKey: "", kid: null, updatedAt: now }).where("id", "in", agentIds).execute();
  await trx.updateTable("agentCapabilityGrant").set({ status: "revoked", updatedAt: now }).where("agentId", "in", agentIds).where("status", "!=", "revoked").execute();
}

export async function revokeAgent(db: Db, id: string): Promise<void> {
  await db.transaction().execute((trx) => revokeAgentsIn(trx, [id], new Date()));
}

/** Revokes a host and, with it, every agent on it (agent-auth's /host/revoke cascade), in one transaction. */
export async function revokeHost(db: Db, id: string): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const now = new Date();
    await trx.updateTable("agentHost").set({ status: "revoked", publicKey: "", kid: null, updatedAt: now }).where("id", "=", id).execute();
    const live = await trx.selectFrom("agent").select("id").where("hostId", "=", id).where("status", "not in", ["revoked", "rejected"]).execute();
    await revokeAgentsIn(trx, live.map((a) => a.id as string), now);
    return live.length;
  });
}

/** Revokes one grant; the agent keeps its others. Only an active or pending grant can be revoked. */
export async function revokeGrant(db: Db, id: string): Promise<boolean> {
  const result = await db
    .updateTable("agentCapabilityGrant")
    .set({ status: "revoked", updatedAt: new Date() })
    .where("id", "=", id)
    .where("status", "in", ["active", "pending"])
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** An owned host with what its OAuth client needs: its name, status and enrolled key (JWK as JSON text). */
export async function findOwnedHostKey(db: Db, userId: string, hostId: string): Promise<{ id: string; name: string | null; status: string; publicKey: string | null } | null> {
  const row = await db.selectFrom("agentHost").select(["id", "name", "status", "publicKey"]).where("id", "=", hostId).where("userId", "=", userId).executeTakeFirst();
  return row ? { id: row.id, name: row.name ?? null, status: row.status, publicKey: row.publicKey ?? null } : null;
}
