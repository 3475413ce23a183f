import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import { Spend, Transaction, type LockingScript } from "@bsv/sdk";

/**
 * A local stand-in for ARC (the BSV transaction processor), speaking its HTTP API as
 * @bsv/sdk's `ARC` broadcaster and the service use it:
 *
 *   POST /v1/tx        `{rawTx}` (hex or extended format): each input must spend a known
 *                      unspent output with a valid unlocking script (checked with the SDK's
 *                      interpreter), the fee must meet the policy; answers `{txid, txStatus, ...}`
 *                      with 200, DOUBLE_SPEND_ATTEMPTED for a spent input, or ARC's problem
 *                      answers (460 unknown input, 461 bad unlocking script, 465 fee too low).
 *   GET  /v1/tx/{txid} the transaction's status; 404 unknown.
 *   GET  /v1/policy    the mining fee.
 *
 * Its own little chain: `coin()` makes a spendable output out of nothing (the funding a test
 * gives a key), `mine()` puts the seen transactions into the next block, `quiet` holds new
 * transactions back from the network (status SENT_TO_NETWORK) until `announce()`.
 */
export interface ArcTx {
  txid: string;
  tx: Transaction;
  txStatus: string;
  blockHeight?: number;
  blockHash?: string;
}

const problemBody = (status: number, title: string, detail: string, txid?: string) =>
  JSON.stringify({ type: `https://bitcoin-sv.github.io/arc/#/errors?id=_${status}`, title, status, detail, instance: null, txid: txid ?? null, extraInfo: detail });

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

export async function startArc(options: { apiKey?: string; fee?: { satoshis: number; bytes: number } } = {}) {
  const fee = options.fee ?? { satoshis: 1, bytes: 1000 };
  const utxos = new Map<string, { satoshis: number; lockingScript: LockingScript }>();
  /** Who spent an outpoint. */
  const spentBy = new Map<string, string>();
  const txs = new Map<string, ArcTx>();
  const requests: { method: string; path: string; headers: IncomingMessage["headers"] }[] = [];
  const state = { tip: 870_000, quiet: false, down: false };

  function accept(raw: string): { status: number; body: string } {
    let tx: Transaction;
    try {
      tx = /^[0-9a-f]{8}0000000000ef/i.test(raw) ? Transaction.fromHexEF(raw) : Transaction.fromHex(raw);
    } catch {
      return { status: 463, body: problemBody(463, "Malformed transaction", "the transaction could not be parsed") };
    }
    const txid = tx.id("hex");
    const known = txs.get(txid);
    if (known) return { status: 200, body: statusBody(known) };
    let inputSats = 0;
    for (const [i, input] of tx.inputs.entries()) {
      const outpoint = `${input.sourceTXID}.${input.sourceOutputIndex}`;
      const competing = spentBy.get(outpoint);
      if (competing) return { status: 200, body: JSON.stringify({ txid, txStatus: "DOUBLE_SPEND_ATTEMPTED", extraInfo: `${outpoint} is spent`, competingTxs: [competing], blockHash: "", blockHeight: 0, status: 200, title: "OK", timestamp: new Date().toISOString() }) };
      const source = utxos.get(outpoint);
      if (!source) return { status: 460, body: problemBody(460, "Not extended format", `input ${i} spends ${outpoint}, which is not a known unspent output`, txid) };
      const spend = new Spend({
        sourceTXID: input.sourceTXID!,
        sourceOutputIndex: input.sourceOutputIndex,
        sourceSatoshis: source.satoshis,
        lockingScript: source.lockingScript,
        transactionVersion: tx.version,
        otherInputs: tx.inputs.filter((_, j) => j !== i),
        outputs: tx.outputs,
        unlockingScript: input.unlockingScript!,
        inputSequence: input.sequence ?? 0xffffffff,
        inputIndex: i,
        lockTime: tx.lockTime,
      });
      let valid = false;
      try {
        valid = spend.validate();
      } catch {
        valid = false;
      }
      if (!valid) return { status: 461, body: problemBody(461, "Malformed transaction", `input ${i}'s unlocking script fails`, txid) };
      inputSats += source.satoshis;
    }
    const outputSats = tx.outputs.reduce((sum, o) => sum + (o.satoshis ?? 0), 0);
    const size = tx.toBinary().length;
    if (inputSats - outputSats < Math.ceil((size * fee.satoshis) / fee.bytes)) return { status: 465, body: problemBody(465, "Fee too low", `fee ${inputSats - outputSats} for ${size} bytes`, txid) };
    for (const input of tx.inputs) {
      const outpoint = `${input.sourceTXID}.${input.sourceOutputIndex}`;
      utxos.delete(outpoint);
      spentBy.set(outpoint, txid);
    }
    tx.outputs.forEach((o, vout) => utxos.set(`${txid}.${vout}`, { satoshis: o.satoshis ?? 0, lockingScript: o.lockingScript }));
    const entry: ArcTx = { txid, tx, txStatus: state.quiet ? "SENT_TO_NETWORK" : "SEEN_ON_NETWORK" };
    txs.set(txid, entry);
    return { status: 200, body: statusBody(entry) };
  }

  const statusBody = (t: ArcTx) =>
    JSON.stringify({ txid: t.txid, txStatus: t.txStatus, blockHeight: t.blockHeight ?? null, blockHash: t.blockHash ?? null, extraInfo: "", competingTxs: null, merklePath: "", status: 200, title: "OK", timestamp: new Date().toISOString() });

  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://arc");
    requests.push({ method: req.method ?? "GET", path: url.pathname, headers: req.headers });
    const send = (status: number, body: string) => res.writeHead(status, { "content-type": "application/json" }).end(body);
    if (state.down) return send(503, problemBody(503, "Service unavailable", "scripted outage"));
    if (options.apiKey && req.headers.authorization !== `Bearer ${options.apiKey}`) return send(401, problemBody(401, "Unauthorized", "a bearer API key is required"));
    if (req.method === "POST" && url.pathname === "/v1/tx") {
      let rawTx: unknown;
      try {
        rawTx = (JSON.parse(await readBody(req)) as { rawTx?: unknown }).rawTx;
      } catch {
        return send(400, problemBody(400, "Bad request", "the body is not JSON"));
      }
      if (typeof rawTx !== "string") return send(400, problemBody(400, "Bad request", "rawTx is missing"));
      const answer = accept(rawTx);
      return send(answer.status, answer.body);
    }
    const status = /^\/v1\/tx\/([0-9a-f]{64})$/.exec(url.pathname);
    if (req.method === "GET" && status) {
      const t = txs.get(status[1]!);
      return t ? send(200, statusBody(t)) : send(404, problemBody(404, "Not found", "transaction not found"));
    }
    if (req.method === "GET" && url.pathname === "/v1/policy") {
      return send(200, JSON.stringify({ timestamp: new Date().toISOString(), policy: { maxscriptsizepolicy: 100_000_000, maxtxsigopscountspolicy: 4_294_967_295, maxtxsizepolicy: 100_000_000, miningFee: fee } }));
    }
    return send(404, problemBody(404, "Not found", "no such route"));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;

  return {
    url: `http://127.0.0.1:${port}`,
    state,
    txs,
    requests,
    /** A spendable output of `satoshis` locked by `lockingScript`, as if a block had paid it: `{txid, vout, satoshis}`. */
    coin(lockingScript: LockingScript, satoshis: number) {
      const txid = randomBytes(32).toString("hex");
      utxos.set(`${txid}.0`, { satoshis, lockingScript });
      return { txid, vout: 0, satoshis };
    },
    isUnspent: (outpoint: string) => utxos.has(outpoint),
    spenderOf: (outpoint: string) => spentBy.get(outpoint) ?? null,
    /** Held-back transactions reach the network. */
    announce() {
      for (const t of txs.values()) if (t.txStatus === "SENT_TO_NETWORK") t.txStatus = "SEEN_ON_NETWORK";
    },
    /** The transactions seen on the network go into the next block. */
    mine() {
      state.tip += 1;
      const blockHash = randomBytes(32).toString("hex");
      for (const t of txs.values()) if (t.txStatus === "SEEN_ON_NETWORK") Object.assign(t, { txStatus: "MINED", blockHeight: state.tip, blockHash });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
