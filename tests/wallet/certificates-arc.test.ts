import { Certificate, P2PKH, PrivateKey, Transaction } from "@bsv/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { certificateTypeId, CERTIFICATE_CATALOG, findCertificateTypeByKey } from "../../plugins/certificates/catalog.js";
import { REVOCATION_OUTPUT_SATOSHIS } from "../../plugins/certificates/arc-chain.js";
import { loadEnv } from "../../lib/env.js";
import { startArc } from "../helpers/arc.js";
import { bindWallet, requestCertificate } from "../helpers/certificates.js";
import { useTempDirs, useTestServer } from "../helpers/fixtures.js";
import type { TestServer } from "../helpers/server.js";
import { peerClient } from "../helpers/mutual-auth.js";
import { startIndexer, txo } from "../helpers/ordinals.js";
import { personWithIdentity } from "../helpers/wallet.js";

/**
 * Certificate issuance switched on for real: CERTIFICATE_FUNDING_KEY's coins (listed by the
 * ordinals indexer stand-in) fund each certificate's revocation outpoint, broadcast through a
 * local ARC stand-in that checks every input's signature and fee; a revocation spends the
 * outpoint and is followed through ARC's status to `confirmed`.
 */
const BINDING_TYPE = certificateTypeId(findCertificateTypeByKey("bapWalletBinding")!);
const ARC_KEY = "arc-test-api-key";
const fundingKey = PrivateKey.fromRandom();
const fundingAddress = fundingKey.toAddress();
/** The second server's own funding key (two processes must not spend the same coins). */
const watchedKey = PrivateKey.fromRandom();

/** A plain coin (no ordinal) as the indexer lists it. */
const plainTxo = (c: { txid: string; vout: number; satoshis: number }, owner: string) => ({ txid: c.txid, vout: c.vout, outpoint: `${c.txid}_${c.vout}`, satoshis: c.satoshis, owner, height: 869_990, idx: "1", script: "", origin: null });

let arc: Awaited<ReturnType<typeof startArc>>;
let indexer: Awaited<ReturnType<typeof startIndexer>>;
let coin: { txid: string; vout: number; satoshis: number };

beforeAll(async () => {
  arc = await startArc({ apiKey: ARC_KEY, fee: { satoshis: 50, bytes: 1000 } });
  indexer = await startIndexer({ tip: () => arc.state.tip });
  coin = arc.coin(new P2PKH().lock(fundingAddress), 20_000);
  // The indexer lists an ordinal (1 satoshi, an origin) first: spending it would burn an NFT, and
  // the ARC stand-in does not know it, so a funding transaction that took it would be refused.
  indexer.script(fundingAddress, { kind: "ok", txos: [txo(fundingAddress), plainTxo(coin, fundingAddress)] });
  const watchedCoin = arc.coin(new P2PKH().lock(watchedKey.toAddress()), 20_000);
  indexer.script(watchedKey.toAddress(), { kind: "ok", txos: [plainTxo(watchedCoin, watchedKey.toAddress())] });
});
afterAll(async () => {
  await arc?.close();
  await indexer?.close();
});

/** Every log line, at debug level: the funding key must never be in one. */
const lines: string[] = [];
const mainServer = useTestServer(() => ({
  LOG_LEVEL: "debug",
  CERTIFICATE_ISSUANCE_ENABLED: "true",
  CERTIFICATE_REVOCATION_DEPTH: "2",
  CERTIFICATE_FUNDING_KEY: fundingKey.toWif(),
  ARC_URL: arc.url,
  ARC_API_KEY: ARC_KEY,
  ORDINALS_API_URL: indexer.url,
  OUTBOUND_ALLOW_PRIVATE: "true",
}), { logDestination: { write: (line: string) => void lines.push(line) }, revocationWatch: { everyMs: 3_600_000 } });

const server = mainServer;
const certifierKey = async (on: TestServer = mainServer) => (await on.api("/.well-known/auth")).json.identityKey as string;
const revoke = (peer: ReturnType<typeof peerClient>, serial: string) => peer.client.fetch(`${server.url}/api/certificates/revoke/${encodeURIComponent(serial)}`, { method: "POST" });
const statusOf = async (serial: string) => (await server.api(`/api/certificates/status/${encodeURIComponent(serial)}`)).json.revocation;

/** A person with a wallet bound to a fresh identity, and a bapWalletBinding certificate request for it. */
async function issue(server: TestServer = mainServer) {
  const person = await personWithIdentity(server);
  const peer = peerClient();
  const binding = await bindWallet(server, person, peer.key);
  const request = await requestCertificate(server, peer, await certifierKey(server), BINDING_TYPE, { bapId: person.id.bapId, verifiedAt: binding.verifiedAt });
  return { person, peer, ...request };
}

describe("certificate issuance through ARC", () => {
  it("answers readiness with status protected once issuance and the chain are on (still 503, as the spec says)", async () => {
    const res = await server.api("/api/certificates/readiness");
    expect(res.status).toBe(503);
    expect(res.json).toEqual({ status: "protected", issuance: true, revocation: true });
  });

  it("funds each certificate's revocation outpoint with a transaction ARC accepted, chaining the change of one issuance into the next", async () => {
    const first = await issue();
    expect(first.res.status).toBe(200);
    const c = first.json.certificate;
    expect(await new Certificate(c.type, c.serialNumber, c.subject, c.certifier, c.revocationOutpoint, c.fields, c.signature).verify()).toBe(true);
    const [fundingTxid, vout] = c.revocationOutpoint.split(".");
    expect(vout).toBe("0");
    // ARC has the funding transaction: it spent the funding coin (not the ordinal) and its output 0 is unspent.
    const funding = arc.txs.get(fundingTxid)!;
    expect(funding.txStatus).toBe("SEEN_ON_NETWORK");
    expect(funding.tx.inputs.map((i) => `${i.sourceTXID}.${i.sourceOutputIndex}`)).toEqual([`${coin.txid}.0`]);
    expect(funding.tx.outputs[0]!.satoshis).toBe(REVOCATION_OUTPUT_SATOSHIS);
    expect(arc.isUnspent(c.revocationOutpoint)).toBe(true);
    // The revocation output is not at the funding address (it is never taken as funding).
    expect(funding.tx.outputs[0]!.lockingScript.toHex()).not.toBe(new P2PKH().lock(fundingAddress).toHex());
    expect(funding.tx.outputs[1]!.lockingScript.toHex()).toBe(new P2PKH().lock(fundingAddress).toHex());
    // The SDK's broadcaster sent ARC_API_KEY as a bearer token.
    const posts = arc.requests.filter((r) => r.method === "POST" && r.path === "/v1/tx");
    expect(posts.length).toBeGreaterThan(0);
    for (const post of posts) expect(post.headers.authorization).toBe(`Bearer ${ARC_KEY}`);

    // The indexer still lists only the spent coin: the next issuance spends the first one's change.
    const second = await issue();
    expect(second.res.status).toBe(200);
    const next = arc.txs.get(second.json.certificate.revocationOutpoint.split(".")[0])!;
    expect(next.tx.inputs.map((i) => `${i.sourceTXID}.${i.sourceOutputIndex}`)).toEqual([`${fundingTxid}.1`]);
  });

  it("revokes through ARC: broadcast, observed once the network has the spend, confirmed at CERTIFICATE_REVOCATION_DEPTH", async () => {
    const { peer, json } = await issue();
    const serial = json.certificate.serialNumber as string;
    const outpoint = json.certificate.revocationOutpoint as string;

    arc.state.quiet = true;
    const broadcast = await revoke(peer, serial);
    expect(broadcast.status).toBe(202);
    const view = (await broadcast.json()).revocation;
    expect(view).toMatchObject({ state: "broadcast", revoked: false, final: false });
    // The spend is in ARC, spending exactly the revocation outpoint with the derived key's signature.
    expect(arc.spenderOf(outpoint)).toBe(view.txid);
    const spend: Transaction = arc.txs.get(view.txid)!.tx;
    expect(spend.inputs).toHaveLength(1);
    expect(spend.outputs[0]!.lockingScript.toHex()).toBe(new P2PKH().lock(fundingAddress).toHex());

    // ARC holds it back: not yet seen, still broadcast.
    expect(await statusOf(serial)).toMatchObject({ state: "broadcast", revoked: false });
    arc.state.quiet = false;
    arc.announce();
    expect(await statusOf(serial)).toMatchObject({ state: "observed", revoked: true, final: false, txid: view.txid });
    arc.mine();
    expect(await statusOf(serial)).toMatchObject({ state: "observed", final: false });
    arc.mine();
    expect(await statusOf(serial)).toMatchObject({ state: "confirmed", revoked: true, final: true });

    // Final: asking again changes nothing and broadcasts nothing.
    const before = arc.txs.size;
    const again = await revoke(peer, serial);
    expect(again.status).toBe(200);
    expect(arc.txs.size).toBe(before);
  });

  it("answers 503 with a problem while ARC is down, keeps a revocation prepared, and goes on once ARC is back", async () => {
    const { peer, json } = await issue();
    const serial = json.certificate.serialNumber as string;
    arc.state.down = true;
    try {
      const refused = await issue();
      expect(refused.res.status).toBe(503);
      expect(refused.json).toMatchObject({ code: "REVOCATION_FUNDING_UNAVAILABLE", status: 503, title: expect.any(String), detail: expect.any(String) });
      // The broadcaster's own words stay in the log.
      expect(JSON.stringify(refused.json)).not.toMatch(/scripted outage|ARC/);
      expect(lines.some((line) => line.includes("revocation outpoint not funded") && line.includes("503"))).toBe(true);
      const prepared = await revoke(peer, serial);
      expect(prepared.status).toBe(202);
      expect((await prepared.json()).revocation.state).toBe("prepared");
    } finally {
      arc.state.down = false;
    }
    const moved = await revoke(peer, serial);
    expect((await moved.json()).revocation.state).toBe("broadcast");
    expect((await statusOf(serial)).state).toBe("observed");
  });

  it("never logs the funding key, in any form", () => {
    expect(lines.length).toBeGreaterThan(0);
    const all = lines.join("\n");
    for (const form of [fundingKey.toWif(), fundingKey.toHex(), fundingKey.toHex().padStart(64, "0")]) expect(all).not.toContain(form);
  });

  it("answers eligibility for every catalog type, each issuable or saying why not", async () => {
    const person = await personWithIdentity(server);
    const peer = peerClient();
    await bindWallet(server, person, peer.key);
    const res = await server.api(`/api/certificates/eligibility?bapId=${person.id.bapId}`, { cookie: person.cookie });
    expect(res.status).toBe(200);
    expect(res.json.issuanceEnabled).toBe(true);
    const types = res.json.types as { key: string; eligible: boolean; issuable: boolean; reason: string }[];
    expect(types.map((t) => t.key).sort()).toEqual(CERTIFICATE_CATALOG.map((e) => e.key).sort());
    for (const t of types) {
      expect(t.reason.length).toBeGreaterThan(0);
      if (!t.issuable) expect(t.reason).toMatch(/not issue|does not issue/i);
    }
    expect(types.find((t) => t.key === "bapWalletBinding")).toMatchObject({ eligible: true, issuable: true });
    expect(types.filter((t) => t.issuable).map((t) => t.key)).toEqual(["bapWalletBinding"]);
  });
});

describe("the revocation watch (no request needed)", () => {
  const watched = useTestServer(
    () => ({ CERTIFICATE_ISSUANCE_ENABLED: "true", CERTIFICATE_REVOCATION_DEPTH: "2", CERTIFICATE_FUNDING_KEY: watchedKey.toHex(), ARC_URL: arc.url, ARC_API_KEY: ARC_KEY, ORDINALS_API_URL: indexer.url, OUTBOUND_ALLOW_PRIVATE: "true" }),
    { revocationWatch: { everyMs: 150 } },
  );
  const stateOf = async (serial: string) => (await watched.db.selectFrom("issuedCertificate").select("revocationState").where("serialNumber", "=", serial).executeTakeFirstOrThrow()).revocationState;
  async function until(serial: string, state: string) {
    for (let i = 0; i < 100 && (await stateOf(serial)) !== state; i++) await new Promise((resolve) => setTimeout(resolve, 100));
    return stateOf(serial);
  }

  it("sends a revocation left prepared while ARC was down, and follows it to confirmed", async () => {
    const { peer, json, res } = await issue(watched);
    expect(res.status).toBe(200);
    const serial = json.certificate.serialNumber as string;
    arc.state.down = true;
    try {
      const prepared = await peer.client.fetch(`${watched.url}/api/certificates/revoke/${encodeURIComponent(serial)}`, { method: "POST" });
      expect((await prepared.json()).revocation.state).toBe("prepared");
    } finally {
      arc.state.down = false;
    }
    // Nobody asks again: the watch broadcasts it, sees it on the network, then counts the blocks.
    expect(await until(serial, "observed")).toBe("observed");
    expect(arc.spenderOf(json.certificate.revocationOutpoint)).toBeTruthy();
    arc.mine();
    arc.mine();
    expect(await until(serial, "confirmed")).toBe("confirmed");
  });
});

describe("CERTIFICATE_FUNDING_KEY", () => {
  const tempDir = useTempDirs("idp-funding-key-");
  const production = { NODE_ENV: "production", BETTER_AUTH_SECRET: "s".repeat(40), AUTH_URL: "https://id.example.com", MAIL_DISABLED: "true", CERTIFICATE_ISSUANCE_ENABLED: "true", SERVER_IDENTITY_KEY: "22".repeat(32) };

  it("is required in production once issuance is on, and is never in a warning", () => {
    expect(() => loadEnv({ ...production, DATA_DIR: tempDir() })).toThrow(/CERTIFICATE_FUNDING_KEY: required/);
    const key = PrivateKey.fromRandom();
    const config = loadEnv({ ...production, DATA_DIR: tempDir(), CERTIFICATE_FUNDING_KEY: key.toWif() });
    expect(config.certificates.fundingKey).toBe(key.toHex().padStart(64, "0"));
    expect(config.warnings.join("\n")).not.toContain(key.toWif());
    expect(config.certificates.arc.url).toBe("https://arc.gorillapool.io");
  });

  it("refuses what is not a private key, naming the setting but not the value", () => {
    expect(() => loadEnv({ DATA_DIR: tempDir(), CERTIFICATE_FUNDING_KEY: "not-a-key-at-all" })).toThrow(/CERTIFICATE_FUNDING_KEY: must be a secp256k1 private key/);
    try {
      loadEnv({ DATA_DIR: tempDir(), CERTIFICATE_FUNDING_KEY: "not-a-key-at-all" });
    } catch (err) {
      expect(String(err)).not.toContain("not-a-key-at-all");
    }
  });

  it("outside production, issuance on without it warns and leaves issuance refused", () => {
    const config = loadEnv({ DATA_DIR: tempDir(), CERTIFICATE_ISSUANCE_ENABLED: "true" });
    expect(config.warnings.join("\n")).toContain("CERTIFICATE_ISSUANCE_ENABLED=true without CERTIFICATE_FUNDING_KEY");
  });
});
