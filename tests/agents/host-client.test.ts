import { randomUUID } from "node:crypto";
import { SignJWT } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { agentKit, ed25519, type Host, type KeyPair } from "../helpers/agents.js";
import { useTestServer } from "../helpers/fixtures.js";
import { signUp, token } from "../helpers/oauth.js";
import { postForm } from "../helpers/server.js";
import { ACCESS_TOKEN, GRANT, callMcp, mcp, personsGrant, verified } from "../helpers/token-exchange.js";

/**
 * An enrolled agent host as its own OAuth client, without a secret (RFC 7523 §2.2
 * private_key_jwt): its owner asks for the client, the host signs client assertions with its
 * enrolled Ed25519 key (EdDSA), and the host's record decides: a rotated key works at once,
 * a revoked or paused host's client is refused at once. Only the owner may ask, and the
 * client counts against the owner's tier like any client they own.
 */
const server = useTestServer();
const { hostJwt, enrolledHost } = agentKit(() => server);
const ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

type Person = Awaited<ReturnType<typeof signUp>>;

const askForClient = (cookie: string, hostId: string) => server.api(`/api/agents/hosts/${encodeURIComponent(hostId)}/oauth-client`, { method: "POST", cookie });

/** A client assertion (RFC 7523 §3) signed by `key`, as the host makes it. */
function assertion(clientId: string, key: KeyPair) {
  return new SignJWT({ jti: randomUUID() }).setProtectedHeader({ alg: "EdDSA" }).setIssuer(clientId).setSubject(clientId).setAudience(server.url).setIssuedAt().setExpirationTime("60s").sign(key.privateKey);
}

async function clientCredentials(clientId: string, key: KeyPair, extra: Record<string, string> = {}) {
  return token(server, { grant_type: "client_credentials", client_assertion_type: ASSERTION_TYPE, client_assertion: await assertion(clientId, key), ...extra });
}

/** A fresh person with an enrolled host and that host's client. */
async function hostWithClient(): Promise<{ person: Person; host: Host; clientId: string }> {
  const person = await signUp(server);
  const host = await enrolledHost(person.cookie);
  const res = await askForClient(person.cookie, host.hostId);
  expect(res.status, res.text).toBe(201);
  return { person, host, clientId: res.json.client_id as string };
}

/** A person who joins an organization of `owner`'s as a plain member. */
async function coMember(owner: Person, name = "Co-member"): Promise<Person> {
  const member = await signUp(server, { name });
  const org = await server.api("/api/auth/organization/create", { cookie: owner.cookie, body: { name: "Shared Org", slug: `shared-${randomUUID()}` } });
  expect(org.status, org.text).toBe(200);
  const invite = await server.api("/api/auth/organization/invite-member", { cookie: owner.cookie, body: { organizationId: org.json.id, email: member.email, role: "member" } });
  expect((await server.api("/api/auth/organization/accept-invitation", { cookie: member.cookie, body: { invitationId: invite.json.id } })).status).toBe(200);
  return member;
}

const ownedClients = async (userId: string) => (await server.db.selectFrom("oauthClient").select("clientId").where("userId", "=", userId).execute()).length;

describe("an enrolled agent host as a private_key_jwt client", () => {
  let owner: { person: Person; host: Host; clientId: string };
  beforeAll(async () => {
    owner = await hostWithClient();
  });

  it("is created once for the owner, with no secret in any answer", async () => {
    const again = await askForClient(owner.person.cookie, owner.host.hostId);
    expect(again.status, again.text).toBe(200);
    expect(again.headers.get("content-type")).toMatch(/^application\/json/);
    expect(again.headers.get("cache-control")).toContain("no-store");
    expect(again.json).toEqual({
      client_id: owner.clientId,
      host_id: owner.host.hostId,
      token_endpoint_auth_method: "private_key_jwt",
      grant_types: ["client_credentials", GRANT],
      scope: "service:read",
    });
    expect(again.text).not.toMatch(/secret/i);
    const row = await server.db.selectFrom("oauthClient").selectAll().where("clientId", "=", owner.clientId).executeTakeFirstOrThrow();
    expect(row.clientSecret).toBeNull();
    expect(row.userId).toBe(owner.person.user.id);
    expect(await ownedClients(owner.person.user.id)).toBe(1);
  });

  it("gets an RFC 9068 JWT for /mcp with an assertion signed by the host key", async () => {
    const res = await clientCredentials(owner.clientId, owner.host.hostKey, { resource: mcp(server) });
    expect(res.status, res.text).toBe(200);
    expect(res.json.refresh_token).toBeUndefined();
    expect(res.json.scope).toBe("service:read");
    expect(res.text).not.toMatch(/secret/i);
    const claims = await verified(server, res.json.access_token, mcp(server));
    expect(claims.sub).toBe(owner.clientId);
    expect(claims.client_id).toBe(owner.clientId);
    expect((await callMcp(server, res.json.access_token)).status).toBe(200);
  });

  it("refuses an assertion signed by any other key", async () => {
    const res = await clientCredentials(owner.clientId, await ed25519());
    expect(res.status).toBe(401);
    expect(res.json.error).toBe("invalid_client");
  });

  it("refuses the client a secret: client_secret_basic names no credential it has", async () => {
    const res = await token(server, { grant_type: "client_credentials" }, { authorization: `Basic ${Buffer.from(`${owner.clientId}:guess`).toString("base64")}` });
    expect(res.status).toBe(401);
    expect(res.json.error).toBe("invalid_client");
  });

  it("exchanges a person's token as the actor (RFC 8693), authenticated by the host key", async () => {
    const grant = await personsGrant(server, { resource: mcp(server) });
    const res = await token(server, {
      grant_type: GRANT,
      subject_token: grant.accessToken,
      subject_token_type: ACCESS_TOKEN,
      resource: mcp(server),
      client_assertion_type: ASSERTION_TYPE,
      client_assertion: await assertion(owner.clientId, owner.host.hostKey),
    });
    expect(res.status, res.text).toBe(200);
    const claims = await verified(server, res.json.access_token, mcp(server));
    expect(claims.sub).toBe(grant.person.user.id);
    expect(claims.act).toEqual({ sub: owner.clientId });
  });

  it("follows the host's key rotation at once: the new key works, the old one no longer", async () => {
    const { person, host, clientId } = await hostWithClient();
    const next = await ed25519();
    const rotated = await server.api("/api/auth/host/rotate-key", { headers: { authorization: `Bearer ${await hostJwt(host.hostId, host.hostKey)}` }, body: { public_key: next.jwk } });
    expect(rotated.status, rotated.text).toBe(200);
    // agent-auth renames a host on rotation (its id becomes the new key's thumbprint).
    const renamed = rotated.json.host_id as string;
    const old = await clientCredentials(clientId, host.hostKey);
    expect(old.json.error).toBe("invalid_client");
    const fresh = await clientCredentials(clientId, next);
    expect(fresh.status, fresh.text).toBe(200);
    // Asking again for the renamed host answers the same client.
    const again = await askForClient(person.cookie, renamed);
    expect(again.status).toBe(200);
    expect(again.json.client_id).toBe(clientId);
  });

  it("stops at once when the owner revokes the host, and while it is paused", async () => {
    const { person, host, clientId } = await hostWithClient();
    const issued = await clientCredentials(clientId, host.hostKey);
    expect(issued.status).toBe(200);
    const introspect = async () => postForm(server, "/api/auth/oauth2/introspect", { token: issued.json.access_token, client_assertion_type: ASSERTION_TYPE, client_assertion: await assertion(clientId, host.hostKey) });
    const live = await introspect();
    expect(live.status, live.text).toBe(200);
    expect(live.json).toMatchObject({ active: true, client_id: clientId });
    expect((await server.api(`/api/agents/hosts/${host.hostId}/pause`, { method: "POST", cookie: person.cookie })).status).toBe(200);
    const paused = await clientCredentials(clientId, host.hostKey);
    expect(paused.status).toBe(400);
    expect(paused.json.error).toBe("invalid_client");
    expect((await server.api(`/api/agents/hosts/${host.hostId}/resume`, { method: "POST", cookie: person.cookie })).status).toBe(200);
    expect((await clientCredentials(clientId, host.hostKey)).status).toBe(200);
    expect((await server.api(`/api/agents/hosts/${host.hostId}/revoke`, { method: "POST", cookie: person.cookie })).status).toBe(200);
    const revoked = await clientCredentials(clientId, host.hostKey);
    expect(revoked.status).toBe(400);
    expect(revoked.json).toMatchObject({ error: "invalid_client" });
    // Introspection and revocation authenticate the same way (RFC 7662 §2.1, RFC 7009 §2.1).
    expect((await introspect()).json.error).toBe("invalid_client");
    const again = await askForClient(person.cookie, host.hostId);
    expect(again.status).toBe(409);
    expect(again.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  });

  it("stops at once when the host revokes itself through agent-auth", async () => {
    const { host, clientId } = await hostWithClient();
    const res = await server.api("/api/auth/host/revoke", { headers: { authorization: `Bearer ${await hostJwt(host.hostId, host.hostKey)}` }, body: {} });
    expect(res.status, res.text).toBe(200);
    expect((await clientCredentials(clientId, host.hostKey)).json.error).toBe("invalid_client");
  });

  it("is the owner's alone: a stranger and an organization co-member get 404 and no client", async () => {
    const [member, stranger] = await Promise.all([coMember(owner.person), signUp(server, { name: "Stranger" })]);
    const host = await enrolledHost(owner.person.cookie, "Second laptop");
    for (const other of [member, stranger]) {
      const res = await askForClient(other.cookie, host.hostId);
      expect(res.status).toBe(404);
      expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      expect(await ownedClients(other.user.id)).toBe(0);
    }
    expect((await askForClient(owner.person.cookie, "no-such-host")).status).toBe(404);
  });

  it("stops when the host moves itself to another account", async () => {
    const { person, host, clientId } = await hostWithClient();
    const other = await coMember(person, "New owner");
    const moved = await server.api("/api/auth/host/switch-account", { cookie: other.cookie, headers: { authorization: `Bearer ${await hostJwt(host.hostId, host.hostKey)}` }, body: { host_id: host.hostId } });
    expect(moved.status, moved.text).toBe(200);
    expect((await clientCredentials(clientId, host.hostKey)).json.error).toBe("invalid_client");
  });

  it("needs a session", async () => {
    const res = await server.api(`/api/agents/hosts/${owner.host.hostId}/oauth-client`, { method: "POST" });
    expect(res.status).toBe(401);
  });

  it("counts against the owner's tier limit like any client they own", async () => {
    // The free tier allows one OAuth client; the owner's first host already has it.
    const host = await enrolledHost(owner.person.cookie, "Third laptop");
    const res = await askForClient(owner.person.cookie, host.hostId);
    expect(res.status, res.text).toBe(403);
    expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(res.json.code).toBe("CLIENT_LIMIT_REACHED");
    expect(await ownedClients(owner.person.user.id)).toBe(1);
  });
});
