import { ARC, FetchHttpClient, P2PKH, PrivateKey, Transaction, type LockingScript } from "@bsv/sdk";
import * as v from "valibot";
import type { SafeFetch } from "../../lib/safe-fetch.js";
import type { FundingOutput, FundingSource } from "./funding.js";
import { RevocationFundingFailed, RevocationUnavailable, type RevocationChain } from "./revocation.js";

/**
 * The revocation chain on BSV through ARC (plugins/certificates/revocation.ts):
 *
 *   fundOutpoint  spends the funding key's coins (found through the indexer, funding.ts) into a
 *                 transaction whose output 0 is the certificate's revocation outpoint
 *                 (REVOCATION_OUTPUT_SATOSHIS to the revocation key), change back to the funding
 *                 address, and broadcasts it with @bsv/sdk's ARC broadcaster (POST /v1/tx);
 *   spend         spends that output back to the funding address (it pays its own fee);
 *   confirmations asks ARC for the spend's status (GET /v1/tx/{txid}): seen on the network is 0,
 *                 mined at height h is tip - h + 1 (the tip from the indexer).
 *
 * The revocation key is derived from the funding key (BRC-42, invoice "certificate revocation"),
 * so revocation outputs never sit at the funding address and are never taken as funding.
 * The fee rate is ARC's mining policy (GET /v1/policy). Signatures are deterministic (RFC 6979):
 * broadcasting a spend again is the same transaction, which ARC accepts as known.
 */
export interface ArcChainOptions {
  /** ARC_URL, e.g. https://arc.gorillapool.io */
  arcUrl: string;
  /** ARC_API_KEY: sent as `Authorization: Bearer` when set. */
  apiKey?: string;
  /** CERTIFICATE_FUNDING_KEY (64 hex digits). Never logged. */
  fundingKey: string;
  funding: FundingSource;
  fetch: SafeFetch;
}

/** What each revocation outpoint holds: enough for its own spend's fee at any plausible rate. */
export const REVOCATION_OUTPUT_SATOSHIS = 1000;
/** Serialized sizes (bytes) for the fee: a signed P2PKH input, a P2PKH output, the rest. */
const INPUT_BYTES = 148;
const OUTPUT_BYTES = 34;
const OVERHEAD_BYTES = 10;

/** ARC statuses (its TransactionStatus) under which the network has the transaction. */
const SEEN = new Set(["SEEN_ON_NETWORK", "ACCEPTED_BY_NETWORK", "MINED", "IMMUTABLE"]);
const MINED = new Set(["MINED", "IMMUTABLE"]);

const TxStatus = v.looseObject({ txStatus: v.string(), blockHeight: v.nullish(v.number()) });
const Policy = v.looseObject({ policy: v.looseObject({ miningFee: v.looseObject({ satoshis: v.pipe(v.number(), v.minValue(0)), bytes: v.pipe(v.number(), v.minValue(1)) }) }) });

const outpointOf = (text: string) => {
  const match = /^([0-9a-f]{64})[._](\d+)$/.exec(text);
  if (!match) throw new RevocationUnavailable(`${text} is not an outpoint (txid.vout)`);
  return { txid: match[1]!, vout: Number(match[2]) };
};

export function arcRevocationChain(options: ArcChainOptions): RevocationChain {
  const base = options.arcUrl.replace(/\/+$/, "");
  const headers: Record<string, string> = { accept: "application/json", ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}) };
  const httpClient = new FetchHttpClient((url, init) => options.fetch(url, { method: init.method, headers: init.headers, body: init.body ?? undefined }));
  const arc = new ARC(base, { apiKey: options.apiKey, httpClient, deploymentId: "bap-identity-provider" });

  const fundingKey = PrivateKey.fromHex(options.fundingKey);
  const revocationKey = fundingKey.deriveChild(fundingKey.toPublicKey(), "certificate revocation");
  const fundingAddress = fundingKey.toAddress();
  const fundingLock = new P2PKH().lock(fundingAddress);
  const revocationLock = new P2PKH().lock(revocationKey.toAddress());

  // Outputs this process spent, and its own change not yet indexed: the indexer lags the
  // broadcasts, so it may still list a spent coin or not yet list the change.
  const spentHere = new Set<string>();
  let pendingChange: FundingOutput[] = [];
  // One funding transaction at a time, so two issuances never pick the same coin.
  let queue: Promise<unknown> = Promise.resolve();

  async function getJson<T extends v.GenericSchema>(path: string, schema: T): Promise<v.InferOutput<T> | null> {
    const res = await options.fetch(`${base}${path}`, { headers });
    if (res.status === 404) return null;
    if (res.status !== 200) throw new Error(`ARC answered ${res.status} to GET ${path}`);
    const parsed = v.safeParse(schema, await res.json().catch(() => undefined));
    if (!parsed.success) throw new Error(`ARC answered GET ${path} with an unexpected shape`);
    return parsed.output;
  }

  async function feeFor(inputs: number, outputs: number): Promise<number> {
    const policy = await getJson("/v1/policy", Policy);
    if (!policy) throw new Error("ARC has no mining policy (GET /v1/policy)");
    const { satoshis, bytes } = policy.policy.miningFee;
    return Math.max(1, Math.ceil(((OVERHEAD_BYTES + inputs * INPUT_BYTES + outputs * OUTPUT_BYTES) * satoshis) / bytes));
  }

  async function broadcast(tx: Transaction): Promise<string> {
    const answer = await arc.broadcast(tx);
    if (answer.status !== "success") throw new Error(`ARC refused the transaction: ${answer.code} ${answer.description}`);
    return tx.id("hex");
  }

  async function fund(): Promise<string> {
    const listed = await options.funding.unspent(fundingAddress);
    const key = (o: FundingOutput) => `${o.txid}.${o.vout}`;
    const seen = new Set<string>();
    const coins = [...pendingChange, ...listed].filter((o) => !spentHere.has(key(o)) && !seen.has(key(o)) && seen.add(key(o)));
    const picked: FundingOutput[] = [];
    let total = 0;
    let fee = 0;
    for (const coin of coins) {
      picked.push(coin);
      total += coin.satoshis;
      fee = await feeFor(picked.length, 2);
      if (total >= REVOCATION_OUTPUT_SATOSHIS + fee) break;
    }
    if (total < REVOCATION_OUTPUT_SATOSHIS + fee || !picked.length) {
      throw new RevocationFundingFailed(`the funding address ${fundingAddress} holds too little to fund a revocation outpoint (${REVOCATION_OUTPUT_SATOSHIS} satoshis and the fee)`);
    }
    const tx = new Transaction();
    for (const coin of picked) {
      tx.addInput({ sourceTXID: coin.txid, sourceOutputIndex: coin.vout, unlockingScriptTemplate: new P2PKH().unlock(fundingKey, "all", false, coin.satoshis, fundingLock), sequence: 0xffffffff });
    }
    tx.addOutput({ lockingScript: revocationLock, satoshis: REVOCATION_OUTPUT_SATOSHIS });
    const change = total - REVOCATION_OUTPUT_SATOSHIS - fee;
    // A 1-satoshi change would look like an ordinal and never be spent: it goes to the fee.
    if (change > 1) tx.addOutput({ lockingScript: fundingLock, satoshis: change });
    await tx.sign();
    let txid: string;
    try {
      txid = await broadcast(tx);
    } catch (err) {
      // A coin someone else spent (or a change output that never made it) is not tried again.
      if (/DOUBLE_SPEND|MISSING|INPUTS/i.test(String(err))) for (const coin of picked) spentHere.add(key(coin));
      throw err;
    }
    for (const coin of picked) spentHere.add(key(coin));
    pendingChange = pendingChange.filter((o) => !spentHere.has(key(o)));
    if (change > 1) pendingChange.push({ txid, vout: 1, satoshis: change });
    return `${txid}.0`;
  }

  async function spendOutpoint(text: string): Promise<string> {
    const { txid, vout } = outpointOf(text);
    const fee = await feeFor(1, 1);
    const tx = new Transaction();
    tx.addInput({ sourceTXID: txid, sourceOutputIndex: vout, unlockingScriptTemplate: new P2PKH().unlock(revocationKey, "all", false, REVOCATION_OUTPUT_SATOSHIS, revocationLock as LockingScript), sequence: 0xffffffff });
    tx.addOutput({ lockingScript: fundingLock, satoshis: REVOCATION_OUTPUT_SATOSHIS - fee });
    await tx.sign();
    return broadcast(tx);
  }

  return {
    enabled: true,
    fundOutpoint() {
      const next = queue.then(fund, fund);
      queue = next.catch(() => undefined);
      return next.catch((err: unknown) => {
        throw err instanceof RevocationFundingFailed ? err : new RevocationFundingFailed(err instanceof Error ? err.message : "funding failed");
      });
    },
    spend: spendOutpoint,
    async confirmations(txid) {
      const status = await getJson(`/v1/tx/${txid}`, TxStatus);
      if (!status || !SEEN.has(status.txStatus.toUpperCase())) return null;
      if (!MINED.has(status.txStatus.toUpperCase()) || typeof status.blockHeight !== "number") return 0;
      return Math.max(1, (await options.funding.tipHeight()) - status.blockHeight + 1);
    },
  };
}
