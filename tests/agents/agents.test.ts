import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { assertUniqueEndpointKeys } from "../../plugins/agents/index.js";
import { newIdentity, signRequest } from "../helpers/bap.js";
import { submitWith } from "../helpers/browser.js";
import { signInThroughPage, useBrowser, useTestServer } from "../helpers/fixtures.js";
import { registerClient, signUp } from "../helpers/oauth.js";
import { agentKit, ed25519, type Agent, type KeyPair } from "../helpers/agents.js";

/**
 * Agent Auth Protocol, end to end over HTTP with real Ed25519 keys: a person creates a host,
 * the host enrols its own key, registers an agent with the agent's key, the person approves,
 * and the agent runs capabilities with its signed JWT against the person's real data.
 */

const server = useTestServer();
const browser = useBrowser();

const { hostJwt, agentJwt } = agentKit(() => server);

async function bearer(path: string, jwt: string, body?: unknown) {
  return server.api(path, { headers: { authorization: `Bearer ${jwt}` }, ...(body === undefined ? {} : { body }) });
}

async function execute(agent: Agent, capability: string, args?: Record<string, unknown>, jwt?: string) {
  return bearer("/api/auth/capability/execute", jwt ?? (await agentJwt(agent)), { capability, ...(args ? { arguments: args } : {}) });
}

/** A person with a registered BAP identity, and an enrolled host of theirs. */
async function personWithHost(name = "Agent Owner") {
  const person = await signUp(server, { name });
  const identity = newIdentity();
  const body = JSON.stringify({ bapId: identity.bapId, name: "Main" });
  const registered = await server.api("/api/user/bap-ids", { cookie: person.cookie, body, headers: { "x-auth-token": signRequest(identity.key, "/api/user/bap-ids", body) } });
  expect(registered.status).toBe(201);

  const created = await server.api("/api/auth/host/create", { cookie: person.cookie, body: { name: "Build server" } });
  expect(created.status).toBe(200);
  expect(created.json).toMatchObject({ status: "pending_enrollment", enrollmentToken: expect.any(String) });

  // The host makes its own key and enrols it with the one-time token; no session involved.
  const hostKey = await ed25519();
  const enrolled = await server.api("/api/auth/host/enroll", { body: { token: created.json.enrollmentToken, public_key: hostKey.jwk } });
  expect(enrolled.status).toBe(200);
  expect(enrolled.json).toMatchObject({ hostId: created.json.hostId, status: "active" });
  // The token is single use.
  expect((await server.api("/api/auth/host/enroll", { body: { token: created.json.enrollmentToken, public_key: (await ed25519()).jwk } })).status).toBe(401);
  return { person, identity, hostId: created.json.hostId as string, hostKey };
}

/** The host registers an agent with a fresh key, asking for `capabilities`. */
async function registerAgent(host: { hostId: string; hostKey: KeyPair }, capabilities: string[], extra: Record<string, unknown> = {}) {
  const key = await ed25519();
  const res = await bearer("/api/auth/agent/register", await hostJwt(host.hostId, host.hostKey, { agent_public_key: key.jwk }), { name: "Backup assistant", capabilities, reason: "keep your backup fresh", ...extra });
  expect(res.status).toBe(200);
  return { res, agent: { id: res.json.agent_id as string, hostId: host.hostId, key } };
}

async function approveByApi(cookie: string, agentId: string, userCode: string) {
  return server.api("/api/auth/agent/approve-capability", { cookie, body: { agent_id: agentId, user_code: userCode, action: "approve" } });
}

describe("discovery", () => {
  it("serves /.well-known/agent-configuration at the root, and lists the capabilities with input schemas", async () => {
    const config = await server.api("/.well-known/agent-configuration");
    expect(config.status).toBe(200);
    expect(config.headers.get("content-type")).toMatch(/^application\/json/);
    expect(config.json).toMatchObject({
      issuer: `${server.url}/api/auth`,
      algorithms: ["Ed25519"],
      modes: ["delegated"],
      approval_methods: expect.arrayContaining(["device_authorization", "ciba"]),
      endpoints: { register: `${server.url}/api/auth/agent/register`, execute: `${server.url}/api/auth/capability/execute` },
    });
    const list = await server.api("/api/auth/capability/list");
    expect(list.status).toBe(200);
    const names = (list.json.capabilities as { name: string }[]).map((c) => c.name).sort();
    expect(names).toEqual(["backup.push", "backup.status", "nft.verify_ownership", "profile.read"]);
    const push = await server.api("/api/auth/capability/describe?name=backup.push");
    expect(push.status).toBe(200);
    expect(push.json.input).toMatchObject({ type: "object", required: ["encryptedBackup"], properties: { encryptedBackup: { type: "string" } } });
    const nft = await server.api("/api/auth/capability/describe?name=nft.verify_ownership");
    expect(nft.json.input.properties).toHaveProperty("minCount");
  });
});

describe("schema", () => {
  /** The spec's AgentHost, Agent, AgentCapabilityGrant and ApprovalRequest resources. */
  const SPEC: Record<string, string[]> = {
    agentHost: ["id", "name", "userId", "defaultCapabilities", "publicKey", "kid", "jwksUrl", "enrollmentTokenHash", "enrollmentTokenExpiresAt", "status", "activatedAt", "expiresAt", "lastUsedAt", "createdAt", "updatedAt"],
    agent: ["id", "name", "userId", "hostId", "status", "mode", "publicKey", "kid", "jwksUrl", "lastUsedAt", "activatedAt", "expiresAt", "metadata", "createdAt", "updatedAt"],
    agentCapabilityGrant: ["id", "agentId", "capability", "deniedBy", "grantedBy", "expiresAt", "createdAt", "updatedAt", "status", "reason", "constraints"],
    approvalRequest: [
      "id", "method", "agentId", "hostId", "userId", "capabilities", "status", "userCodeHash", "loginHint", "bindingMessage", "clientNotificationToken",
      "clientNotificationEndpoint", "deliveryMode", "interval", "lastPolledAt", "expiresAt", "createdAt", "updatedAt",
    ],
  };

  it("has the four agent tables with every field the spec names, and its defaults", async () => {
    const tables = new Map((await server.db.introspection.getTables()).map((t) => [t.name, new Set(t.columns.map((c) => c.name))]));
    for (const [table, columns] of Object.entries(SPEC)) {
      expect(tables.get(table), `table ${table}`).toBeDefined();
      expect(columns.filter((c) => !tables.get(table)!.has(c)), `missing columns in ${table}`).toEqual([]);
    }
    // Defaults: host and grant `active`, agent `active`/`delegated` once approved, approval `pending`.
    const host = await personWithHost();
    const { res, agent } = await registerAgent(host, ["profile.read"]);
    const approval = await server.db.selectFrom("approvalRequest").select(["status", "method"]).where("agentId", "=", agent.id).executeTakeFirstOrThrow();
    expect(approval).toEqual({ status: "pending", method: "device_authorization" });
    await approveByApi(host.person.cookie, agent.id, res.json.approval.user_code);
    expect(await server.db.selectFrom("agentHost").select("status").where("id", "=", host.hostId).executeTakeFirst()).toEqual({ status: "active" });
    expect(await server.db.selectFrom("agent").select(["status", "mode"]).where("id", "=", agent.id).executeTakeFirst()).toEqual({ status: "active", mode: "delegated" });
    expect(await server.db.selectFrom("agentCapabilityGrant").select("status").where("agentId", "=", agent.id).executeTakeFirst()).toEqual({ status: "active" });
  });
});

describe("an agent acting for a person", () => {
  it("enrols, registers, is approved on our page in the browser, and reads real data with its signed JWT", async () => {
    const host = await personWithHost("Browser Approver");
    const { res, agent } = await registerAgent(host, ["profile.read", "backup.status"]);
    expect(res.json).toMatchObject({ status: "pending", approval: { method: "device_authorization", user_code: expect.stringMatching(/^[A-HJ-NP-Z2-9]{4}-[A-HJ-NP-Z2-9]{4}$/) } });
    const approvalUrl = new URL(res.json.approval.verification_uri_complete);
    expect(approvalUrl.origin + approvalUrl.pathname).toBe(`${server.url}/agents/approve`);

    // Pending: the agent cannot act yet.
    expect((await execute(agent, "profile.read")).json.error).toBe("agent_pending");

    const page = await browser.page();
    await page.goto(approvalUrl.href);
    await signInThroughPage(page, host.person);
    expect(new URL(page.url()).pathname).toBe("/agents/approve");
    await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe("Approve Backup assistant?");
    await expect(page.locator("#agent-code").textContent()).resolves.toBe(res.json.approval.user_code);
    const asks = await page.locator("ul.scopes").textContent();
    expect(asks).toContain("profile.read");
    expect(asks).toContain("backup.status");
    await submitWith(page, "Approve");
    await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe("Agent approved");

    const status = await bearer("/api/auth/agent/status", await agentJwt(agent));
    expect(status.json).toMatchObject({ status: "active", user_id: host.person.user.id });

    const profile = await execute(agent, "profile.read");
    expect(profile.status).toBe(200);
    expect(profile.json.data.user).toMatchObject({ id: host.person.user.id, email: host.person.email, name: "Browser Approver" });
    expect(profile.json.data.identities).toHaveLength(1);
    expect(profile.json.data.identities[0]).toMatchObject({ identity_key: host.identity.bapId, is_primary: true, name: "Main" });
    // The same records GET /api/user/bap-ids answers the person.
    const rest = await server.api("/api/user/bap-ids", { cookie: host.person.cookie });
    expect(profile.json.data.identities).toEqual(rest.json.bapIds);

    const backup = await execute(agent, "backup.status");
    expect(backup.status).toBe(200);
    expect(backup.json.data).toMatchObject({ hasBackup: false, bapId: host.identity.bapId, userId: host.person.user.id });
  });

  it("pushes a backup only once granted, through the same rules as POST /api/backup", async () => {
    const host = await personWithHost();
    const { res, agent } = await registerAgent(host, ["backup.status"]);
    expect((await approveByApi(host.person.cookie, agent.id, res.json.approval.user_code)).json).toMatchObject({ status: "approved", added: ["backup.status"] });

    const ciphertext = randomBytes(96).toString("base64");
    const refused = await execute(agent, "backup.push", { encryptedBackup: ciphertext });
    expect(refused.status).toBe(403);
    expect(refused.json.error).toBe("capability_not_granted");

    // Asking for more: a new approval with a new code, approved by the person.
    const asked = await bearer("/api/auth/agent/request-capability", await agentJwt(agent), { capabilities: ["backup.push"], reason: "store your new backup" });
    expect(asked.json).toMatchObject({ status: "pending", approval: { method: "device_authorization", user_code: expect.any(String) } });
    expect((await approveByApi(host.person.cookie, agent.id, asked.json.approval.user_code)).json).toMatchObject({ status: "approved", added: ["backup.push"] });

    const pushed = await execute(agent, "backup.push", { encryptedBackup: ciphertext });
    expect(pushed.status).toBe(200);
    expect(pushed.json.data).toMatchObject({ success: true, bapId: host.identity.bapId, generation: 1 });
    const again = await execute(agent, "backup.push", { encryptedBackup: randomBytes(96).toString("base64") });
    expect(again.json.data.generation).toBe(2);

    // The person sees the agent's write through the REST route, and the agent sees the same status.
    const restStatus = await server.api("/api/backup/status", { cookie: host.person.cookie });
    const agentStatus = await execute(agent, "backup.status");
    expect(agentStatus.json.data).toEqual(restStatus.json);
    expect(restStatus.json).toMatchObject({ hasBackup: true, generation: 2, bapId: host.identity.bapId });

    // Arguments are checked like a body: not ciphertext, or another identity, is refused.
    const bad = await execute(agent, "backup.push", { encryptedBackup: '{"wif":"L1..."}' });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toBe("invalid_arguments");
    const other = newIdentity();
    const elsewhere = await execute(agent, "backup.push", { encryptedBackup: ciphertext, bapId: other.bapId });
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.json.error).toBe("identity_not_owned");
  });

  it("answers NFT ownership honestly: no wallet connected is a definite no, with its arguments still checked", async () => {
    const host = await personWithHost();
    const { res, agent } = await registerAgent(host, ["nft.verify_ownership"]);
    await approveByApi(host.person.cookie, agent.id, res.json.approval.user_code);
    const bad = await execute(agent, "nft.verify_ownership", { minCount: 0 });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toBe("invalid_arguments");
    // With wallets connected, tests/wallet/wallet.test.ts runs it against a local indexer.
    const answer = await execute(agent, "nft.verify_ownership", { collection: "my-collection" });
    expect(answer.status).toBe(200);
    expect(answer.json.data).toMatchObject({ owns: false, count: 0, incomplete: false, bapId: host.identity.bapId, message: expect.stringMatching(/No wallet/) });
  });
});

describe("CIBA approval", () => {
  it("lists a request addressed to the signed-in person on the approval page, and approves it there", async () => {
    const host = await personWithHost();
    const { res, agent } = await registerAgent(host, ["profile.read"], { preferred_method: "ciba", binding_message: "Nightly backup job" });
    expect(res.json.approval).toMatchObject({ method: "ciba" });
    const page = await server.api("/agents/approve", { cookie: host.person.cookie });
    expect(page.status).toBe(200);
    expect(page.text).toContain("Backup assistant");
    expect(page.text).toContain("Nightly backup job");
    const approvalId = /name="approval_id" value="([^"]+)"/.exec(page.text)?.[1];
    expect(approvalId).toBeTruthy();
    // Someone else's session cannot answer it.
    const stranger = await signUp(server);
    const form = (cookie: string) =>
      server.api("/agents/approve", { cookie, headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ approval_id: approvalId!, decision: "approve" }).toString() });
    expect((await form(stranger.cookie)).status).toBe(400);
    const approved = await form(host.person.cookie);
    expect(approved.status).toBe(200);
    expect(approved.text).toContain("Agent approved");
    expect((await execute(agent, "profile.read")).status).toBe(200);
  });
});

describe("refusals", () => {
  async function approvedAgent(capabilities = ["profile.read"]) {
    const host = await personWithHost();
    const { res, agent } = await registerAgent(host, capabilities);
    expect((await approveByApi(host.person.cookie, agent.id, res.json.approval.user_code)).status).toBe(200);
    expect((await execute(agent, capabilities[0]!)).status).toBe(200);
    return { host, agent };
  }

  it("refuses a replayed agent JWT and an expired one", async () => {
    const { agent } = await approvedAgent();
    const jwt = await agentJwt(agent);
    expect((await execute(agent, "profile.read", undefined, jwt)).status).toBe(200);
    const replay = await execute(agent, "profile.read", undefined, jwt);
    expect(replay.status).toBe(401);
    expect(replay.json.error).toBe("jti_replay");

    const now = Math.floor(Date.now() / 1000);
    const expired = await execute(agent, "profile.read", undefined, await agentJwt(agent, { iat: now - 600, exp: now - 540 }));
    expect(expired.status).toBe(401);
    expect(expired.json.error).toBe("invalid_jwt");
    expect(expired.headers.get("www-authenticate")).toMatch(/AgentAuth discovery=/);
    // Valid times, but signed by another key.
    const forged = await agentJwt({ ...agent, key: await ed25519() });
    expect((await execute(agent, "profile.read", undefined, forged)).json.error).toBe("invalid_jwt");
  });

  it("refuses a revoked grant, a paused agent until resumed, and a revoked agent for good", async () => {
    const { host, agent } = await approvedAgent(["profile.read", "backup.status"]);
    const cookie = host.person.cookie;
    const estate = await server.api("/api/agents", { cookie });
    expect(estate.status).toBe(200);
    expect(estate.json.hosts).toEqual([expect.objectContaining({ id: host.hostId, status: "active", name: "Build server" })]);
    const listed = estate.json.agents.find((a: { id: string }) => a.id === agent.id);
    expect(listed).toMatchObject({ status: "active", hostId: host.hostId });
    const grant = listed.grants.find((g: { capability: string }) => g.capability === "backup.status");
    expect(grant).toMatchObject({ status: "active", grantedBy: host.person.user.id });

    expect((await server.api(`/api/agents/grants/${grant.id}/revoke`, { cookie, body: {} })).status).toBe(200);
    const revokedGrant = await execute(agent, "backup.status");
    expect(revokedGrant.status).toBe(403);
    expect(revokedGrant.json.error).toBe("grant_revoked");
    expect((await execute(agent, "profile.read")).status).toBe(200);

    expect((await server.api(`/api/agents/agents/${agent.id}/pause`, { cookie, body: {} })).json).toMatchObject({ status: "paused" });
    const paused = await execute(agent, "profile.read");
    expect(paused.status).toBe(403);
    expect(paused.json.error).toBe("agent_paused");
    expect((await server.api(`/api/agents/agents/${agent.id}/pause`, { cookie, body: {} })).status).toBe(409);
    expect((await server.api(`/api/agents/agents/${agent.id}/resume`, { cookie, body: {} })).json).toMatchObject({ status: "active" });
    expect((await execute(agent, "profile.read")).status).toBe(200);

    // Pausing the host stops its agents too.
    expect((await server.api(`/api/agents/hosts/${host.hostId}/pause`, { cookie, body: {} })).status).toBe(200);
    expect((await execute(agent, "profile.read")).json.error).toBe("host_paused");
    expect((await server.api(`/api/agents/hosts/${host.hostId}/resume`, { cookie, body: {} })).status).toBe(200);
    expect((await execute(agent, "profile.read")).status).toBe(200);

    const revoked = await server.api(`/api/agents/agents/${agent.id}/revoke`, { cookie, body: {} });
    expect(revoked.json).toMatchObject({ status: "revoked" });
    const refused = await execute(agent, "profile.read");
    expect(refused.status).toBe(403);
    expect(refused.json.error).toBe("agent_revoked");
    expect((await server.api(`/api/agents/agents/${agent.id}/resume`, { cookie, body: {} })).status).toBe(409);
  });

  it("revokes every agent of a revoked host", async () => {
    const { host, agent } = await approvedAgent();
    const res = await server.api(`/api/agents/hosts/${host.hostId}/revoke`, { cookie: host.person.cookie, body: {} });
    expect(res.json).toMatchObject({ status: "revoked", agentsRevoked: 1 });
    expect((await execute(agent, "profile.read")).json.error).toBe("agent_revoked");
    // The host cannot register another agent either.
    const key = await ed25519();
    const again = await bearer("/api/auth/agent/register", await hostJwt(host.hostId, host.hostKey, { agent_public_key: key.jwk }), { name: "Second" });
    expect(again.status).toBe(403);
  });

  it("keeps one person's hosts, agents and grants out of another's reach", async () => {
    const { host, agent } = await approvedAgent();
    const stranger = await signUp(server);
    expect((await server.api("/api/agents", { cookie: stranger.cookie })).json).toEqual({ hosts: [], agents: [] });
    for (const path of [`/api/agents/agents/${agent.id}/pause`, `/api/agents/agents/${agent.id}/revoke`, `/api/agents/hosts/${host.hostId}/revoke`]) {
      const res = await server.api(path, { cookie: stranger.cookie, body: {} });
      expect(res.status).toBe(404);
      expect(res.headers.get("content-type")).toMatch(/application\/problem\+json/);
    }
    // agent-auth's own routes: no revoking, updating or granting on someone else's behalf.
    expect((await server.api("/api/auth/host/revoke", { cookie: stranger.cookie, body: { host_id: host.hostId } })).status).toBe(404);
    expect((await server.api("/api/auth/host/update", { cookie: stranger.cookie, body: { host_id: host.hostId, default_capabilities: ["backup.push"] } })).status).toBe(404);
    expect((await server.api("/api/auth/agent/grant-capability", { cookie: stranger.cookie, body: { agent_id: agent.id, capabilities: ["backup.push"] } })).status).toBe(403);
    // A code approves only for the account it was issued to.
    const { res } = await registerAgent(host, ["backup.status"], { force_approval: true });
    expect((await server.api("/api/auth/agent/grant-capability", { cookie: stranger.cookie, body: { agent_id: res.json.agent_id, capabilities: ["backup.push"] } })).status).toBe(403);
    // Without a session at all: 401.
    expect((await server.api("/api/agents")).status).toBe(401);
    // A cross-site browser post is refused even with the owner's cookie.
    expect((await server.api(`/api/agents/agents/${agent.id}/pause`, { cookie: host.person.cookie, body: {}, headers: { origin: "https://evil.example" } })).status).toBe(403);
  });
});

describe("the deviceCode endpoint key shared by two plugins", () => {
  it("serves both POST /api/auth/device/code and agent-auth's device-style approval", async () => {
    // RFC 8628 device authorization: answers (it 404ed while agent-auth's endpoint replaced it).
    const client = await registerClient(server, { redirect_uris: undefined, grant_types: ["urn:ietf:params:oauth:grant-type:device_code"], response_types: [] });
    const oauthDevice = await fetch(`${server.url}/api/auth/device/code`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ client_id: client.client_id }) });
    expect(oauthDevice.status).toBe(200);
    expect(await oauthDevice.json()).toMatchObject({ device_code: expect.any(String), user_code: expect.any(String), verification_uri: `${server.url}/device` });

    // agent-auth's POST /agent/device/code: a host asks for a fresh user code for its pending agent.
    const host = await personWithHost();
    const { agent } = await registerAgent(host, ["profile.read"]);
    const issued = await bearer("/api/auth/agent/device/code", await hostJwt(host.hostId, host.hostKey), { agent_id: agent.id });
    expect(issued.status).toBe(200);
    expect(issued.json).toMatchObject({ device_code: expect.any(String), user_code: expect.stringMatching(/^[A-HJ-NP-Z2-9]{4}-[A-HJ-NP-Z2-9]{4}$/), verification_uri: `${server.url}/agents/approve` });

    // The person types that code on the approval page (lower case, no dash), sees the request, approves.
    const typed = issued.json.user_code.replace("-", "").toLowerCase();
    const page = await server.api(`/agents/approve?code=${typed}`, { cookie: host.person.cookie });
    expect(page.status).toBe(200);
    expect(page.text).toContain(issued.json.user_code);
    expect(page.text).toContain("profile.read");
    const approved = await server.api("/agents/approve", {
      cookie: host.person.cookie,
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ agent_id: agent.id, user_code: issued.json.user_code, decision: "approve" }).toString(),
    });
    expect(approved.status).toBe(200);
    expect(approved.text).toContain("Agent approved");
    expect((await execute(agent, "profile.read")).status).toBe(200);
  });

  it("fails start-up loudly if two plugins ever register the same endpoint key again", () => {
    const endpoints = { deviceCode: {} };
    expect(() => assertUniqueEndpointKeys([{ id: "device-authorization", endpoints }, { id: "agent-auth", endpoints }])).toThrow(/both register an endpoint named "deviceCode"/);
    expect(() => assertUniqueEndpointKeys([{ id: "a", endpoints: { one: {} } }, { id: "b", endpoints: { two: {} } }])).not.toThrow();
  });
});
