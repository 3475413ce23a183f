import { beforeAll, describe, expect, it } from "vitest";
import { agentKit, ed25519, type Agent, type Host } from "../helpers/agents.js";
import { useTestServer } from "../helpers/fixtures.js";
import { signUp } from "../helpers/oauth.js";

/**
 * Only a host's own user changes it, revokes it, moves it to another account or grants its
 * agents capabilities. Sharing an organization with the owner gives no say over the owner's
 * devices, and an agent or host JWT of one's own riding along with one's session changes
 * nothing. Owner, co-member and stranger each have a real enrolled host and an approved agent.
 */

const server = useTestServer();
const { hostJwt, agentJwt, bearer, enrolledHost, approvedAgent } = agentKit(() => server);

type Person = Awaited<ReturnType<typeof signUp>>;
interface Actor {
  person: Person;
  host: Host;
  agent: Agent;
}
let owner: Person;
let member: Actor;
let stranger: Actor;

async function actor(name: string): Promise<Actor> {
  const person = await signUp(server, { name });
  const host = await enrolledHost(person.cookie);
  return { person, host, agent: await approvedAgent(person.cookie, host, ["profile.read"]) };
}

/** The owner's fresh host with an approved agent (each test spoils its own). */
async function ownerHost() {
  const host = await enrolledHost(owner.cookie, "Owner laptop");
  return { host, agent: await approvedAgent(owner.cookie, host, ["profile.read"]) };
}

const hostRow = (id: string) => server.db.selectFrom("agentHost").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
const agentRow = (id: string) => server.db.selectFrom("agent").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
const activeGrants = async (agentId: string) => (await server.db.selectFrom("agentCapabilityGrant").select("capability").where("agentId", "=", agentId).where("status", "=", "active").execute()).map((g) => g.capability).sort();

/** `who`'s session cookie, with their own host or agent JWT riding along (or nothing). */
async function credentials(who: Actor, riding: "none" | "host JWT" | "agent JWT") {
  const headers: Record<string, string> = {};
  if (riding === "host JWT") headers.authorization = `Bearer ${await hostJwt(who.host.hostId, who.host.hostKey)}`;
  if (riding === "agent JWT") headers.authorization = `Bearer ${await agentJwt(who.agent)}`;
  return { cookie: who.person.cookie, headers };
}

beforeAll(async () => {
  owner = await signUp(server, { name: "Host Owner" });
  [member, stranger] = await Promise.all([actor("Co-member"), actor("Stranger")]);
  // The owner's organization, which the co-member joins as a plain member.
  const org = await server.api("/api/auth/organization/create", { cookie: owner.cookie, body: { name: "Shared Org", slug: `shared-${Date.now()}` } });
  expect(org.status).toBe(200);
  const invite = await server.api("/api/auth/organization/invite-member", { cookie: owner.cookie, body: { organizationId: org.json.id, email: member.person.email, role: "member" } });
  expect(invite.status).toBe(200);
  const accepted = await server.api("/api/auth/organization/accept-invitation", { cookie: member.person.cookie, body: { invitationId: invite.json.id } });
  expect(accepted.status).toBe(200);
});

const ATTACKERS = () => [
  ["co-member", member],
  ["stranger", stranger],
] as const;
const RIDING = ["none", "host JWT", "agent JWT"] as const;

/** The status of `path` for every attacker with every riding credential, keyed "who + riding". */
async function everyAttempt(path: string, body: () => Promise<unknown> | unknown) {
  const statuses: Record<string, number> = {};
  for (const [who, attacker] of ATTACKERS()) {
    for (const riding of RIDING) {
      const res = await server.api(path, { ...(await credentials(attacker, riding)), body: await body() });
      statuses[`${who} + ${riding}`] = res.status;
      if (res.status === 404) expect(res.json).toMatchObject({ error: "host_not_found" });
    }
  }
  return statuses;
}
const all = (status: number) => Object.fromEntries(ATTACKERS().flatMap(([who]) => RIDING.map((riding) => [`${who} + ${riding}`, status])));

describe("someone else's host or agent", () => {
  it("is not updated: no new key, no new default capabilities", async () => {
    const { host } = await ownerHost();
    const before = await hostRow(host.hostId);
    expect(await everyAttempt("/api/auth/host/update", async () => ({ host_id: host.hostId, public_key: (await ed25519()).jwk, default_capabilities: ["backup.push"] }))).toEqual(all(404));
    const after = await hostRow(host.hostId);
    expect(after.publicKey).toBe(before.publicKey);
    expect(after.defaultCapabilities).toBe(before.defaultCapabilities);
    // The owner's key still works: the host registers an agent, and no one else's key does.
    const key = await ed25519();
    expect((await bearer("/api/auth/agent/register", await hostJwt(host.hostId, host.hostKey, { agent_public_key: key.jwk }), { name: "Still mine", capabilities: ["profile.read"] })).status).toBe(200);
  });

  it("is not revoked, and its agents keep working", async () => {
    const { host, agent } = await ownerHost();
    expect(await everyAttempt("/api/auth/host/revoke", () => ({ host_id: host.hostId }))).toEqual(all(404));
    expect((await hostRow(host.hostId)).status).toBe("active");
    expect((await agentRow(agent.id)).status).toBe("active");
    expect((await bearer("/api/auth/capability/execute", await agentJwt(agent), { capability: "profile.read" })).status).toBe(200);
  });

  it("gets no capability granted to its agents, approved or still pending", async () => {
    const { host, agent } = await ownerHost();
    // A pending agent registered with force_approval has no userId of its own yet.
    const pendingKey = await ed25519();
    const pending = await bearer("/api/auth/agent/register", await hostJwt(host.hostId, host.hostKey, { agent_public_key: pendingKey.jwk }), { name: "Waiting", capabilities: ["profile.read"], force_approval: true });
    expect(pending.status).toBe(200);
    for (const agentId of [agent.id, pending.json.agent_id as string]) {
      expect(await everyAttempt("/api/auth/agent/grant-capability", () => ({ agent_id: agentId, capabilities: ["backup.push"] })), agentId).toEqual(all(403));
      expect(await activeGrants(agentId)).not.toContain("backup.push");
    }
  });

  it("is not moved to another account by switch-account, and keeps its agents", async () => {
    const { host, agent } = await ownerHost();
    expect(await everyAttempt("/api/auth/host/switch-account", () => ({ host_id: host.hostId }))).toEqual(all(403));
    expect((await hostRow(host.hostId)).userId).toBe(owner.user.id);
    expect((await agentRow(agent.id)).status).toBe("active");
  });

  it("has its pending agent answered only by its owner or whoever holds the code", async () => {
    const { host, agent } = await ownerHost();
    const register = async () => {
      const key = await ed25519();
      const res = await bearer("/api/auth/agent/register", await hostJwt(host.hostId, host.hostKey, { agent_public_key: key.jwk }), { name: "Waiting", capabilities: ["profile.read"], force_approval: true });
      expect(res.status).toBe(200);
      return { agentId: res.json.agent_id as string, userCode: res.json.approval.user_code as string };
    };
    const pending = await register();
    // Without the code, neither a co-member nor a stranger may deny (agent-auth asked for none) or approve.
    for (const [who, attacker] of ATTACKERS()) {
      for (const action of ["deny", "approve"]) {
        const res = await server.api("/api/auth/agent/approve-capability", { cookie: attacker.person.cookie, body: { agent_id: pending.agentId, action } });
        expect(res.status, `${who} ${action}`).toBe(403);
      }
      const wrong = await server.api("/api/auth/agent/approve-capability", { cookie: attacker.person.cookie, body: { agent_id: pending.agentId, action: "deny", user_code: "ABCD-EFGH" } });
      expect(wrong.status, `${who} with a wrong code`).toBe(403);
    }
    expect(await agentRow(pending.agentId)).toMatchObject({ status: "pending", userId: null });
    // The owner denies without a code.
    expect((await server.api("/api/auth/agent/approve-capability", { cookie: owner.cookie, body: { agent_id: pending.agentId, action: "deny" } })).status).toBe(200);
    expect((await agentRow(pending.agentId)).status).toBe("rejected");
    // Whoever the host showed the code to may answer with it (RFC 8628 device flow).
    const shown = await register();
    expect((await server.api("/api/auth/agent/approve-capability", { cookie: stranger.person.cookie, body: { agent_id: shown.agentId, action: "deny", user_code: shown.userCode } })).status).toBe(200);
    expect((await agentRow(agent.id)).status).toBe("active");
  });

  it("is out of reach of a co-member through agent-auth's other session routes too", async () => {
    const { host, agent } = await ownerHost();
    const { cookie } = member.person;
    const post = (path: string, body: unknown) => server.api(path, { cookie, body });
    expect((await post("/api/auth/agent/revoke", { agent_id: agent.id })).status).toBe(403);
    expect((await post("/api/auth/agent/revoke-capability", { agent_id: agent.id, capabilities: ["profile.read"] })).status).toBe(403);
    expect((await post("/api/auth/agent/update", { agent_id: agent.id, name: "Renamed" })).status).toBe(404);
    expect((await post("/api/auth/agent/approve-capability", { agent_id: agent.id, action: "deny" })).status).toBe(403);
    expect((await server.api(`/api/auth/agent/get?agent_id=${agent.id}`, { cookie })).status).toBe(404);
    expect((await server.api(`/api/auth/host/get?host_id=${host.hostId}`, { cookie })).status).toBe(404);
    expect((await server.api(`/api/auth/agent/list?host_id=${host.hostId}`, { cookie })).json).toEqual({ agents: [] });
    expect((await server.api("/api/auth/host/list", { cookie })).json.hosts.map((h: { id: string }) => h.id)).not.toContain(host.hostId);
    expect((await agentRow(agent.id)).status).toBe("active");
    expect(await activeGrants(agent.id)).toEqual(["profile.read"]);
    expect((await agentRow(agent.id)).name).not.toBe("Renamed");
  });
});

describe("the owner", () => {
  it("updates, grants and revokes with the session, with or without their own JWT riding along", async () => {
    const { host, agent } = await ownerHost();
    const ownerActor: Actor = { person: owner, host, agent };
    const newKey = await ed25519();
    const updated = await server.api("/api/auth/host/update", { ...(await credentials(ownerActor, "host JWT")), body: { host_id: host.hostId, name: "Renamed laptop", default_capabilities: ["profile.read"] } });
    expect(updated.status).toBe(200);
    expect((await server.api("/api/auth/host/update", { cookie: owner.cookie, body: { host_id: host.hostId, public_key: newKey.jwk } })).status).toBe(200);
    const granted = await server.api("/api/auth/agent/grant-capability", { ...(await credentials(ownerActor, "agent JWT")), body: { agent_id: agent.id, capabilities: ["backup.status"] } });
    expect(granted.status).toBe(200);
    expect(await activeGrants(agent.id)).toEqual(["backup.status", "profile.read"]);
    expect((await server.api("/api/auth/host/switch-account", { cookie: owner.cookie, body: { host_id: host.hostId } })).status).toBe(200);
    const revoked = await server.api("/api/auth/host/revoke", { cookie: owner.cookie, body: { host_id: host.hostId } });
    expect(revoked.status).toBe(200);
    expect(revoked.json).toMatchObject({ status: "revoked" });
  });

  it("revokes with the host's own JWT and no session", async () => {
    const { host } = await ownerHost();
    const res = await bearer("/api/auth/host/revoke", await hostJwt(host.hostId, host.hostKey), {});
    expect(res.status).toBe(200);
    expect((await hostRow(host.hostId)).status).toBe("revoked");
  });

  it("lets the host itself, proven by its key, move to the account signed in beside it", async () => {
    const { host } = await ownerHost();
    const res = await server.api("/api/auth/host/switch-account", { cookie: member.person.cookie, headers: { authorization: `Bearer ${await hostJwt(host.hostId, host.hostKey)}` }, body: { host_id: host.hostId } });
    expect(res.status).toBe(200);
    expect((await hostRow(host.hostId)).userId).toBe(member.person.user.id);
  });
});
