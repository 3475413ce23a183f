import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";

/**
 * A local stand-in for the 1Sat ordinals indexer: `GET /api/txos/address/{address}/unspent`
 * answers what a test scripted for that address (its outputs, an error status, silence past
 * the deadline, a body of the wrong shape), and counts the requests per address;
 * `GET /api/blocks/tip` answers `{hash, height}` with the height `setTip` gave (or `tip()` reads).
 */
export type Script =
  | { kind: "ok"; txos: unknown[] }
  | { kind: "status"; status: number }
  | { kind: "slow"; ms: number }
  | { kind: "garbage" }
  /** The first `failures` requests answer 503, then the outputs. */
  | { kind: "flaky"; failures: number; txos: unknown[] };

/** An unspent 1Sat output carrying an ordinal, as the indexer describes it. */
export function txo(owner: string, opts: { origin?: string; collectionId?: string; withOrigin?: boolean } = {}) {
  const txid = randomBytes(32).toString("hex");
  const outpoint = `${txid}_0`;
  const base = { txid, vout: 0, outpoint, satoshis: 1, owner, height: 870000, idx: "12", spend: "", script: "dqkU" };
  if (opts.withOrigin === false) return { ...base, origin: null };
  const map = opts.collectionId ? { app: "test", type: "ord", subType: "collectionItem", subTypeData: JSON.stringify({ collectionId: opts.collectionId }) } : { app: "test", type: "ord" };
  return { ...base, origin: { outpoint: opts.origin ?? outpoint, nonce: 1, num: "870000:12:0", data: { insc: { file: { hash: "ab", size: 10, type: "image/png" } }, map } } };
}

export async function startIndexer(options: { tip?: () => number } = {}) {
  let tipHeight = 870_000;
  const tip = options.tip ?? (() => tipHeight);
  const scripts = new Map<string, Script>();
  const hits = new Map<string, number>();
  const queries: URLSearchParams[] = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://indexer");
    if (url.pathname === "/api/blocks/tip") return void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ hash: "00".repeat(32), height: tip(), version: 1 }));
    const match = /^\/api\/txos\/address\/([^/]+)\/unspent$/.exec(url.pathname);
    if (!match) return void res.writeHead(404).end();
    const address = decodeURIComponent(match[1]!);
    const n = (hits.get(address) ?? 0) + 1;
    hits.set(address, n);
    queries.push(url.searchParams);
    const script = scripts.get(address) ?? { kind: "ok", txos: [] };
    const json = (body: unknown) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
    switch (script.kind) {
      case "ok":
        return json(script.txos);
      case "status":
        return void res.writeHead(script.status, { "content-type": "application/json" }).end('{"error":"scripted"}');
      case "slow":
        return void setTimeout(() => json([]), script.ms);
      case "garbage":
        return json({ not: "a list" });
      case "flaky":
        return n <= script.failures ? void res.writeHead(503).end() : json(script.txos);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    script: (addr: string, s: Script) => scripts.set(addr, s),
    setTip: (height: number) => {
      tipHeight = height;
    },
    hits: (addr: string) => hits.get(addr) ?? 0,
    queries,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
