import { randomBytes } from "node:crypto";
import { Certificate, createNonce, MasterCertificate, PrivateKey, ProtoWallet, Utils, type WalletInterface } from "@bsv/sdk";
import { describe, expect, it } from "vitest";
import type { RevocationChain } from "../../plugins/certificates/revocation.js";
import { useTestServer } from "../helpers/fixtures.js";
import type { TestServer } from "../helpers/server.js";
import { personWithIdentity } from "../helpers/wallet.js";
import { bindWallet as bind, requestCertificate as requestCertificateOfType, WALLET_BINDING as BINDING } from "../helpers/certificates.js";
import { peerClient, type Peer } from "../helpers/mutual-auth.js";

/** The bapWalletBinding type ID for these tests; the catalog owns the real one. */
const BINDING_TYPE = Buffer.alloc(32, 0xb1).toString("base64");

/**
 * A stand-in for the chain behind revocation (the production broadcaster is off): outpoints are
 * made up, spends are recorded, and the test says how deep each spend is.
 */
function fakeChain() {
  const depth = new Map<string, number | null>();
  const spent: string[] = [];
  const chain: RevocationChain & { enabled: boolean; failing: boolean } = {
    enabled: true,
    failing: false,
    fundOutpoint: async () => `${randomBytes(32).toString("hex")}.0`,
    async spend(outpoint) {
      if (chain.failing) throw new Error("broadcaster unreachable");
      spent.push(outpoint);
      const txid = randomBytes(32).toString("hex");
      depth.set(txid, null);
      return txid;
    },
    confirmations: async (txid) => depth.get(txid) ?? null,
  };
  return { chain, depth, spent };
}

const problem = (res: { status: number; headers: Headers; json: any }, status: number, code?: string) => {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toContain("application/problem+json");
  if (code) expect(res.json.code).toBe(code);
};

const requestCertificate = (server: TestServer, peer: Peer, certifier: string, fields: Record<string, string>, overrides: Record<string, unknown> = {}) =>
  requestCertificateOfType(server, peer, certifier, BINDING_TYPE, fields, overrides);

describe("certificates with issuance off (the default)", () => {
  const server = useTestServer();

  it("refuses signCertificate over mutual authentication with a problem saying issuance is disabled", async () => {
    const meta = await server.api("/.well-known/auth");
    const { res, json } = await requestCertificate(server, peerClient(), meta.json.identityKey, { bapId: "x", verifiedAt: "y" });
    expect(res.status).toBe(503);
    expect(json.code).toBe("CERTIFICATE_ISSUANCE_DISABLED");
    expect(json.detail).toMatch(/disabled/);
  });

  it("refuses signCertificate without mutual authentication", async () => {
    problem(await server.api("/api/certificates/signCertificate", { body: {} }), 401, "MUTUAL_AUTH_REQUIRED");
  });

  it("answers readiness with 503 and status disabled", async () => {
    const res = await server.api("/api/certificates/readiness");
    expect(res.status).toBe(503);
    expect(res.json).toEqual({ status: "disabled", issuance: false, revocation: false });
  });

  it("answers the status of an unknown serial number with 404, never cached", async () => {
    const res = await server.api(`/api/certificates/status/${encodeURIComponent(Buffer.alloc(32, 1).toString("base64"))}`);
    problem(res, 404, "CERTIFICATE_NOT_FOUND");
    expect(res.headers.get("cache-control")).toBe("no-store");
  });
});

describe("certificates with issuance on", () => {
  const { chain, depth, spent } = fakeChain();
  const server = useTestServer({ CERTIFICATE_ISSUANCE_ENABLED: "true", CERTIFICATE_REVOCATION_DEPTH: "3" }, { certificates: { chain, typeIds: { bapWalletBinding: BINDING_TYPE } }, revocationWatch: { everyMs: 3_600_000 } });
  const certifierKey = async () => (await server.api("/.well-known/auth")).json.identityKey as string;

  it("answers readiness with 503 and status protected", async () => {
    const res = await server.api("/api/certificates/readiness");
    expect(res.status).toBe(503);
    expect(res.json.status).toBe("protected");
  });

  it("binds a wallet, lists eligibility, issues a bapWalletBinding certificate that verifies, and revokes it step by step", async () => {
    const person = await personWithIdentity(server);
    const peer = peerClient();
    const binding = await bind(server, person, peer.key);
    expect(binding).toMatchObject({ bapId: person.id.bapId, identityKey: peer.identityKey, verifiedAt: expect.any(String) });

    const resolved = await server.api(`${BINDING}/resolve?bapId=${person.id.bapId}`);
    expect(resolved.json).toEqual(binding);
    expect((await server.api(`${BINDING}/resolve?identityKey=${peer.identityKey}`)).json.bindings).toEqual([binding]);

    const eligibility = await server.api(`/api/certificates/eligibility?bapId=${person.id.bapId}`, { cookie: person.cookie });
    expect(eligibility.status).toBe(200);
    expect(eligibility.json.types.find((t: any) => t.key === "bapWalletBinding")).toMatchObject({ eligible: true, issuable: true });
    expect(eligibility.json.types.find((t: any) => t.key === "githubCert")).toMatchObject({ eligible: false, issuable: false });

    const certifier = await certifierKey();
    const { res, json, clientNonce, wallet, masterKeyring } = await requestCertificate(server, peer, certifier, { bapId: person.id.bapId, verifiedAt: binding.verifiedAt });
    expect(res.status).toBe(200);
    const { certificate: c, serverNonce } = json;
    expect(c).toMatchObject({ type: BINDING_TYPE, subject: peer.identityKey, certifier });
    const cert = new Certificate(c.type, c.serialNumber, c.subject, c.certifier, c.revocationOutpoint, c.fields, c.signature);
    expect(await cert.verify()).toBe(true);
    // BRC-52: the serial number is the certifier's HMAC over both nonces, so ours was used.
    const { valid } = await wallet.verifyHmac({ hmac: Utils.toArray(c.serialNumber, "base64"), data: Utils.toArray(clientNonce + serverNonce, "base64"), protocolID: [2, "certificate issuance"], keyID: serverNonce + clientNonce, counterparty: certifier });
    expect(valid).toBe(true);
    expect(await MasterCertificate.decryptFields(wallet, masterKeyring, c.fields, certifier)).toEqual({ bapId: person.id.bapId, verifiedAt: binding.verifiedAt });
    // A tampered copy does not verify.
    await expect(new Certificate(c.type, c.serialNumber, c.subject, c.certifier, c.revocationOutpoint, { ...c.fields, bapId: c.fields.verifiedAt }, c.signature).verify()).rejects.toThrow();

    const serial = encodeURIComponent(c.serialNumber);
    const status = await server.api(`/api/certificates/status/${serial}`);
    expect(status.headers.get("cache-control")).toBe("no-store");
    expect(status.json).toMatchObject({ serialNumber: c.serialNumber, revocationOutpoint: c.revocationOutpoint, revocation: { state: "none", revoked: false, final: false } });
    expect((await peer.client.fetch(`${server.url}/api/certificates/issued`, { method: "GET" }).then((r) => r.json())).certificates).toHaveLength(1);

    // Only the subject may revoke.
    const stranger = await peerClient().client.fetch(`${server.url}/api/certificates/revoke/${serial}`, { method: "POST" });
    expect(stranger.status).toBe(403);
    expect((await stranger.json()).code).toBe("NOT_CERTIFICATE_SUBJECT");

    // Broadcaster off: the request is recorded as prepared and nothing is spent.
    chain.enabled = false;
    const prepared = await peer.client.fetch(`${server.url}/api/certificates/revoke/${serial}`, { method: "POST" });
    expect(prepared.status).toBe(202);
    expect((await prepared.json()).revocation).toMatchObject({ state: "prepared", revoked: false });
    expect(spent).toEqual([]);

    // Broadcaster on but failing: still prepared, tried again next time.
    chain.enabled = true;
    chain.failing = true;
    const failed = await peer.client.fetch(`${server.url}/api/certificates/revoke/${serial}`, { method: "POST" });
    expect(failed.status).toBe(202);
    expect((await failed.json()).revocation.state).toBe("prepared");
    chain.failing = false;

    // Broadcaster on: prepared -> broadcast (the outpoint is spent).
    const broadcast = await peer.client.fetch(`${server.url}/api/certificates/revoke/${serial}`, { method: "POST" });
    expect((await broadcast.json()).revocation).toMatchObject({ state: "broadcast", revoked: false, final: false });
    expect(spent).toEqual([c.revocationOutpoint]);
    const txid = [...depth.keys()][0]!;

    // Not yet seen: still broadcast. Seen in the mempool: observed, which is enough to stop trusting it.
    expect((await server.api(`/api/certificates/status/${serial}`)).json.revocation.state).toBe("broadcast");
    depth.set(txid, 0);
    expect((await server.api(`/api/certificates/status/${serial}`)).json.revocation).toMatchObject({ state: "observed", revoked: true, final: false, txid });
    depth.set(txid, 2);
    expect((await server.api(`/api/certificates/status/${serial}`)).json.revocation.state).toBe("observed");
    // At CERTIFICATE_REVOCATION_DEPTH confirmations: confirmed, final.
    depth.set(txid, 3);
    expect((await server.api(`/api/certificates/status/${serial}`)).json.revocation).toMatchObject({ state: "confirmed", revoked: true, final: true });
    const again = await peer.client.fetch(`${server.url}/api/certificates/revoke/${serial}`, { method: "POST" });
    expect(again.status).toBe(200);
    expect(spent).toHaveLength(1);
  });

  it("refuses fields the server cannot attest, a foreign client nonce, and an unknown type", async () => {
    const person = await personWithIdentity(server);
    const peer = peerClient();
    const binding = await bind(server, person, peer.key);
    const certifier = await certifierKey();

    // Another person's identity, which is not bound to this key.
    const other = await personWithIdentity(server);
    const foreign = await requestCertificate(server, peer, certifier, { bapId: other.id.bapId, verifiedAt: binding.verifiedAt });
    expect(foreign.res.status).toBe(403);
    expect(foreign.json.code).toBe("CERTIFICATE_FIELDS_REFUSED");

    const wrongTime = await requestCertificate(server, peer, certifier, { bapId: person.id.bapId, verifiedAt: new Date(0).toISOString() });
    expect(wrongTime.json.code).toBe("CERTIFICATE_FIELDS_REFUSED");

    // Someone else's key bound nothing: the same bapId, asked by another peer.
    const thief = await requestCertificate(server, peerClient(), certifier, { bapId: person.id.bapId, verifiedAt: binding.verifiedAt });
    expect(thief.json.code).toBe("CERTIFICATE_FIELDS_REFUSED");

    const notOurs = await createNonce(new ProtoWallet(PrivateKey.fromRandom()) as unknown as WalletInterface, certifier);
    const nonce = await requestCertificate(server, peer, certifier, { bapId: person.id.bapId, verifiedAt: binding.verifiedAt }, { clientNonce: notOurs });
    expect(nonce.res.status).toBe(400);
    expect(nonce.json.code).toBe("INVALID_CLIENT_NONCE");

    const type = await requestCertificate(server, peer, certifier, { bapId: person.id.bapId, verifiedAt: binding.verifiedAt }, { type: Buffer.alloc(32, 2).toString("base64") });
    expect(type.json.code).toBe("CERTIFICATE_TYPE_NOT_ISSUED");

    const extra = await requestCertificate(server, peer, certifier, { bapId: person.id.bapId, verifiedAt: binding.verifiedAt, more: "x" });
    expect(extra.json.code).toBe("CERTIFICATE_FIELDS_REFUSED");
  });
});
