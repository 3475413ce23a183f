import { randomUUID } from "node:crypto";
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from "jose";
import { expect } from "vitest";
import type { TestServer } from "./server.js";

/**
 * Agent Auth Protocol fixtures with real Ed25519 keys: host and agent JWTs, a host created by a
 * person and enrolled with its own key, an agent registered by that host and approved.
 * `agentKit(() => server)` binds them to a test file's server (started later, in beforeAll).
 */

export interface KeyPair {
  privateKey: CryptoKey;
  jwk: JWK;
}
export interface Agent {
  id: string;
  hostId: string;
  key: KeyPair;
}
export interface Host {
  hostId: string;
  hostKey: KeyPair;
}

export async function ed25519(): Promise<KeyPair> {
  const { privateKey, publicKey } = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
  return { privateKey, jwk: await exportJWK(publicKey) };
}

export function agentKit(serverOf: () => TestServer) {
  const audience = () => `${serverOf().url}/api/auth`;

  /** A host JWT (§5.3): issued by the host, for this server, fresh, single use (`jti: null` leaves it out). */
  function hostJwt(hostId: string, key: KeyPair, claims: Record<string, unknown> = {}, opts: { jti?: string | null } = {}) {
    const jwt = new SignJWT(claims).setProtectedHeader({ alg: "EdDSA", typ: "host+jwt" }).setIssuer(hostId).setAudience(audience()).setIssuedAt().setExpirationTime("60s");
    if (opts.jti !== null) jwt.setJti(opts.jti ?? randomUUID());
    return jwt.sign(key.privateKey);
  }

  /** An agent JWT: subject the agent, issuer its host. */
  function agentJwt(agent: Agent, opts: { iat?: number; exp?: number; jti?: string } = {}) {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({})
      .setProtectedHeader({ alg: "EdDSA", typ: "agent+jwt" })
      .setSubject(agent.id)
      .setIssuer(agent.hostId)
      .setAudience(audience())
      .setIssuedAt(opts.iat ?? now)
      .setExpirationTime(opts.exp ?? now + 60)
      .setJti(opts.jti ?? randomUUID())
      .sign(agent.key.privateKey);
  }

  const bearer = (path: string, jwt: string, body?: unknown) => serverOf().api(path, { headers: { authorization: `Bearer ${jwt}` }, ...(body === undefined ? {} : { body }) });

  /** A host of the person signed in with `cookie`: created, then enrolled with the host's own key. */
  async function enrolledHost(cookie: string, name = "Build server"): Promise<Host> {
    const server = serverOf();
    const created = await server.api("/api/auth/host/create", { cookie, body: { name } });
    expect(created.status).toBe(200);
    const hostKey = await ed25519();
    expect((await server.api("/api/auth/host/enroll", { body: { token: created.json.enrollmentToken, public_key: hostKey.jwk } })).status).toBe(200);
    return { hostId: created.json.hostId as string, hostKey };
  }

  /** The host registers an agent with a fresh key; its owner approves with the user code. */
  async function approvedAgent(cookie: string, host: Host, capabilities: string[]): Promise<Agent> {
    const key = await ed25519();
    const registered = await bearer("/api/auth/agent/register", await hostJwt(host.hostId, host.hostKey, { agent_public_key: key.jwk }), { name: "Backup assistant", capabilities, reason: "keep your backup fresh" });
    expect(registered.status).toBe(200);
    const approved = await serverOf().api("/api/auth/agent/approve-capability", { cookie, body: { agent_id: registered.json.agent_id, user_code: registered.json.approval.user_code, action: "approve" } });
    expect(approved.status).toBe(200);
    return { id: registered.json.agent_id as string, hostId: host.hostId, key };
  }

  return { audience, hostJwt, agentJwt, bearer, enrolledHost, approvedAgent };
}
