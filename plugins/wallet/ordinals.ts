import * as v from "valibot";
import { OutboundRefused, type SafeFetch } from "../../lib/safe-fetch.js";

/**
 * The ordinals indexer behind one small interface: which NFTs (1Sat ordinals) an address holds
 * now. The default speaks the public 1Sat ordinals API (GorillaPool's, `ORDINALS_API_URL`) over
 * HTTP through the guarded fetcher, with a deadline per attempt, bounded retries of transient
 * failures and a short cache of answers. A failure is thrown (IndexerError), never turned into
 * "no NFTs": the caller must be able to tell "none" from "could not look".
 */
export interface OrdinalsIndexer {
  /** The first `NFT_ENTRIES_PER_ADDRESS` unspent outputs at `address` that carry an ordinal. */
  nftsOf(address: string, opts?: { fresh?: boolean }): Promise<Nft[]>;
}

/** Spec, Limits: GET /api/wallet/nfts reads the first 100 indexer entries per address only. */
export const NFT_ENTRIES_PER_ADDRESS = 100;

/** The indexer could not answer for an address (unreachable, slow, an error status, an unexpected body). */
export class IndexerError extends Error {
  override name = "IndexerError";
}

/** An unspent ordinal output, as the 1Sat API describes it (the fields we pass on). */
export interface Nft {
  txid: string;
  vout: number;
  outpoint: string;
  satoshis: number;
  owner?: string;
  origin?: { outpoint: string; data?: Record<string, unknown> };
  height?: number;
  idx?: number;
}

const Txo = v.looseObject({
  txid: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/)),
  vout: v.pipe(v.number(), v.integer(), v.minValue(0)),
  outpoint: v.string(),
  satoshis: v.number(),
  owner: v.nullish(v.string()),
  height: v.nullish(v.number()),
  idx: v.nullish(v.union([v.number(), v.string()])),
  origin: v.nullish(v.looseObject({ outpoint: v.string(), data: v.nullish(v.record(v.string(), v.unknown())) })),
});
const TxoList = v.array(Txo);

function toNft(txo: v.InferOutput<typeof Txo>): Nft {
  const idx = txo.idx === null || txo.idx === undefined ? undefined : Number(txo.idx);
  return {
    txid: txo.txid,
    vout: txo.vout,
    outpoint: txo.outpoint,
    satoshis: txo.satoshis,
    ...(txo.owner ? { owner: txo.owner } : {}),
    ...(txo.origin ? { origin: { outpoint: txo.origin.outpoint, ...(txo.origin.data ? { data: txo.origin.data } : {}) } } : {}),
    ...(typeof txo.height === "number" ? { height: txo.height } : {}),
    ...(idx !== undefined && Number.isFinite(idx) ? { idx } : {}),
  };
}

export interface HttpIndexerOptions {
  /** ORDINALS_API_URL, e.g. https://ordinals.gorillapool.io */
  baseUrl: string;
  /** The guarded fetcher, built with the per-attempt deadline. */
  fetch: SafeFetch;
  /** Attempts after the first, for timeouts, network errors, 429 and 5xx. @default 2 */
  retries?: number;
  /** Pause before the first retry, doubled for each next one. @default 200 */
  backoffMs?: number;
  /** How long an answer is reused. @default 60000 */
  cacheTtlMs?: number;
  /** Addresses kept in the cache; the oldest answer goes first. @default 1000 */
  cacheEntries?: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether another attempt could succeed: only "try again later" failures are retried. */
function transient(err: unknown): boolean {
  if (err instanceof IndexerError) return false;
  // A target the guard refused (a private address, a bad URL) stays refused; a deadline passes.
  if (err instanceof OutboundRefused) return /no answer within/.test(err.message);
  return true;
}

export function httpOrdinalsIndexer(options: HttpIndexerOptions): OrdinalsIndexer {
  const base = options.baseUrl.replace(/\/+$/, "");
  const retries = options.retries ?? 2;
  const backoffMs = options.backoffMs ?? 200;
  const ttl = options.cacheTtlMs ?? 60_000;
  const maxEntries = options.cacheEntries ?? 1000;
  const cache = new Map<string, { expires: number; nfts: Nft[] }>();

  async function attempt(address: string): Promise<Nft[]> {
    const url = `${base}/api/txos/address/${encodeURIComponent(address)}/unspent?limit=${NFT_ENTRIES_PER_ADDRESS}&offset=0&bsv20=false`;
    const res = await options.fetch(url, { headers: { accept: "application/json" } });
    if (res.status === 429 || res.status >= 500) throw new Error(`indexer answered ${res.status}`);
    if (res.status !== 200) throw new IndexerError(`indexer answered ${res.status}`);
    let body: unknown;
    try {
      body = await res.json();
    } catch {
      throw new IndexerError("indexer answered something other than JSON");
    }
    const parsed = v.safeParse(TxoList, body);
    if (!parsed.success) throw new IndexerError("indexer answered an unexpected shape");
    // Only outputs that carry an ordinal (an origin) are NFTs; the list is the first page only.
    return parsed.output.slice(0, NFT_ENTRIES_PER_ADDRESS).filter((txo) => txo.origin).map(toNft);
  }

  async function fetchWithRetries(address: string): Promise<Nft[]> {
    for (let n = 0; ; n++) {
      try {
        return await attempt(address);
      } catch (err) {
        if (n >= retries || !transient(err)) throw err instanceof IndexerError ? err : new IndexerError(err instanceof Error ? err.message : "indexer unreachable");
        await sleep(backoffMs * 2 ** n);
      }
    }
  }

  return {
    async nftsOf(address, { fresh = false } = {}) {
      const hit = cache.get(address);
      if (!fresh && hit && hit.expires > Date.now()) return hit.nfts;
      const nfts = await fetchWithRetries(address);
      cache.delete(address);
      if (cache.size >= maxEntries) cache.delete(cache.keys().next().value!);
      cache.set(address, { expires: Date.now() + ttl, nfts });
      return nfts;
    },
  };
}

/** The service's indexer from its settings, over the shared guarded fetcher with the per-attempt deadline. */
export function ordinalsIndexer(settings: { ordinals: { apiUrl: string; timeoutMs: number } }, safeFetch: SafeFetch): OrdinalsIndexer {
  const fetch = safeFetch.withLimits({ timeoutMs: settings.ordinals.timeoutMs, maxBytes: 4 * 1024 * 1024 });
  return httpOrdinalsIndexer({ baseUrl: settings.ordinals.apiUrl, fetch });
}
