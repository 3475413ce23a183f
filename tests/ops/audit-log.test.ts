import { randomBytes } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { agentKit } from "../helpers/agents.js";
import { enrolKey, keySignIn, newIdentity } from "../helpers/bap.js";
import { useTestServer } from "../helpers/fixtures.js";
import { fullCodeFlow, registerClient, signUp, token } from "../helpers/oauth.js";
import { cookiesOf } from "../helpers/server.js";

const server = useTestServer();

interface AuditRow {
  id: string;
  at: string;
  event: string;
  userId: string | null;
  clientId: string | null;
  ip: string | null;
  requestId: string | null;
  detail: Record<string, unknown> | null;
}

let adminCookie = "";

/** An administrator: better-auth's admin plugin reads `user.role`; signed in after the role is set. */
async function makeAdmin() {
  const person = await signUp(server);
  await server.db.updateTable("user").set({ role: "admin" }).where("id", "=", person.user.id).execute();
  const res = await server.api("/api/auth/sign-in/email", { body: { email: person.email, password: person.password } });
  expect(res.status).toBe(200);
  return { ...person, cookie: cookiesOf(res.headers) };
}

async function auditLog(query: Record<string, string>) {
  const res = await server.api(`/api/admin/audit-log?${new URLSearchParams(query)}`, { cookie: adminCookie });
  expect(res.status, res.text).toBe(200);
  return res.json.events as AuditRow[];
}

const requestId = () => `audit-${randomBytes(6).toString("hex")}`;

beforeAll(async () => {
  adminCookie = (await makeAdmin()).cookie;
});

describe("audit log: sign-in", () => {
  it("records a password sign-in and a failed one, with the caller's address and the request id", async () => {
    const person = await signUp(server);
    const okId = requestId();
    const failId = requestId();
    expect((await server.api("/api/auth/sign-in/email", { body: { email: person.email, password: person.password }, headers: { "x-request-id": okId } })).status).toBe(200);
    expect((await server.api("/api/auth/sign-in/email", { body: { email: person.email, password: "wrong password!" }, headers: { "x-request-id": failId } })).status).toBe(401);

    const ok = (await auditLog({ event: "sign_in", userId: person.user.id })).find((e) => e.requestId === okId);
    expect(ok).toMatchObject({ event: "sign_in", userId: person.user.id, ip: "127.0.0.1", detail: { method: "password" } });
    const failed = await auditLog({ event: "sign_in.failed", userId: person.user.id });
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ userId: person.user.id, requestId: failId, detail: { method: "password" } });
    expect(JSON.stringify(failed)).not.toContain("wrong password!");
  });

  it("records a key sign-in", async () => {
    const id = newIdentity();
    const enrolled = await enrolKey(server, id);
    expect(enrolled.status).toBe(200);
    expect((await keySignIn(server, id)).status).toBe(200);
    const user = await server.db.selectFrom("user").select("id").where("pubkey", "=", id.pubkey).executeTakeFirstOrThrow();
    const events = await auditLog({ event: "sign_in", userId: user.id as string });
    expect(events.map((e) => e.detail?.method)).toContain("key");
  });
});

describe("audit log: clients, consent and tokens", () => {
  it("records a client registration", async () => {
    const client = await registerClient(server, { client_name: "Audited App" });
    const events = (await auditLog({ event: "client.registered" })).filter((e) => e.clientId === client.client_id);
    expect(events).toHaveLength(1);
    expect(events[0]!.detail).toMatchObject({ name: "Audited App" });
  });

  it("records a client deleted through RFC 7592 client configuration", async () => {
    const client = await registerClient(server);
    const deleted = await server.api(`/api/auth/oauth2/register/${client.client_id}`, { method: "DELETE", headers: { authorization: `Bearer ${client.registration_access_token}` } });
    expect(deleted.status).toBe(204);
    expect((await auditLog({ event: "client.deleted" })).map((e) => e.clientId)).toContain(client.client_id);
  });

  it("records consent granted, then revoked from the account's authorized apps", async () => {
    const { person, client } = await fullCodeFlow(server);
    const granted = await auditLog({ event: "consent.granted", userId: person.user.id });
    expect(granted).toHaveLength(1);
    expect(granted[0]).toMatchObject({ clientId: client.client_id });
    expect(granted[0]!.detail?.scopes).toContain("openid");

    const revoked = await server.api(`/api/authorized-apps/${client.client_id}`, { method: "DELETE", cookie: person.cookie });
    expect(revoked.status).toBe(204);
    expect(await auditLog({ event: "consent.revoked", userId: person.user.id })).toMatchObject([{ clientId: client.client_id }]);
  });

  it("records the reuse of a rotated refresh token, and not a normal rotation", async () => {
    const { person, client, tokens } = await fullCodeFlow(server);
    const first = await token(server, { grant_type: "refresh_token", refresh_token: tokens.json.refresh_token, client_id: client.client_id });
    expect(first.status).toBe(200);
    expect(await auditLog({ event: "refresh_token.reuse", userId: person.user.id })).toEqual([]);

    const reuse = await token(server, { grant_type: "refresh_token", refresh_token: tokens.json.refresh_token, client_id: client.client_id });
    expect(reuse.json.error).toBe("invalid_grant");
    const events = await auditLog({ event: "refresh_token.reuse", userId: person.user.id });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ clientId: client.client_id });
    expect(JSON.stringify(events)).not.toContain(tokens.json.refresh_token);
  });
});

describe("audit log: agents", () => {
  const { enrolledHost, approvedAgent } = agentKit(() => server);

  it("records an agent approved by its owner, then revoked", async () => {
    const person = await signUp(server);
    const host = await enrolledHost(person.cookie);
    const agent = await approvedAgent(person.cookie, host, ["profile.read"]);
    // agent-auth does not wait for its onEvent callback: the row may land just after the answer.
    const deadline = Date.now() + 10_000;
    let approved = await auditLog({ event: "agent.approved", userId: person.user.id });
    while (approved.length === 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      approved = await auditLog({ event: "agent.approved", userId: person.user.id });
    }
    expect(approved.map((e) => e.detail?.agentId)).toContain(agent.id);

    expect((await server.api(`/api/agents/agents/${agent.id}/revoke`, { cookie: person.cookie, body: {} })).status).toBe(200);
    const revoked = await auditLog({ event: "agent.revoked", userId: person.user.id });
    expect(revoked.map((e) => e.detail?.agentId)).toContain(agent.id);
  });
});

describe("GET /api/admin/audit-log", () => {
  it("is refused without a session (401) and to a signed-in user who is not an admin (403)", async () => {
    const anonymous = await server.api("/api/admin/audit-log");
    expect(anonymous.status).toBe(401);
    const person = await signUp(server);
    const refused = await server.api("/api/admin/audit-log", { cookie: person.cookie });
    expect(refused.status).toBe(403);
    expect(refused.headers.get("content-type")).toContain("application/problem+json");
    expect(refused.json.code).toBe("ADMIN_REQUIRED");
  });

  it("filters by event and user, pages with limit and before, newest first", async () => {
    const person = await signUp(server);
    for (let i = 0; i < 3; i++) expect((await server.api("/api/auth/sign-in/email", { body: { email: person.email, password: `wrong-${i}-password` } })).status).toBe(401);
    const all = await auditLog({ userId: person.user.id });
    expect(all.every((e) => e.userId === person.user.id)).toBe(true);
    const failed = all.filter((e) => e.event === "sign_in.failed");
    expect(failed).toHaveLength(3);
    expect([...all].sort((a, b) => b.at.localeCompare(a.at))).toEqual(all);

    const page = await auditLog({ userId: person.user.id, event: "sign_in.failed", limit: "2" });
    expect(page).toHaveLength(2);
    const rest = await auditLog({ userId: person.user.id, event: "sign_in.failed", before: page[1]!.at });
    expect(rest.every((e) => e.at < page[1]!.at)).toBe(true);
    expect(new Set([...page, ...rest].map((e) => e.id)).size).toBe(page.length + rest.length);
  });

  it("answers 400 for an unknown event name or a bad limit", async () => {
    expect((await server.api("/api/admin/audit-log?event=nope", { cookie: adminCookie })).status).toBe(400);
    expect((await server.api("/api/admin/audit-log?limit=0", { cookie: adminCookie })).status).toBe(400);
  });
});
