import * as v from "valibot";
import type { SafeFetch } from "../../lib/safe-fetch.js";

/**
 * Where the revocation chain (plugins/certificates/arc-chain.ts) learns what the funding key
 * holds and how high the chain is: the 1Sat ordinals indexer the service already reads
 * (ORDINALS_API_URL), which lists an address's unspent outputs (`/api/txos/address/{a}/unspent`)
 * and the chain tip (`/api/blocks/tip`). ARC broadcasts and reports on transactions; it has no
 * UTXO or tip query.
 */
export interface FundingSource {
  /** Spendable outputs at `address`: plain coins only, never a 1-satoshi output or one carrying an ordinal. */
  unspent(address: string): Promise<FundingOutput[]>;
  /** The height of the best chain's tip. */
  tipHeight(): Promise<number>;
}

export interface FundingOutput {
  txid: string;
  vout: number;
  satoshis: number;
}

const Txo = v.looseObject({
  txid: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/)),
  vout: v.pipe(v.number(), v.integer(), v.minValue(0)),
  satoshis: v.pipe(v.number(), v.integer(), v.minValue(0)),
  origin: v.nullish(v.unknown()),
});
const Tip = v.looseObject({ height: v.pipe(v.number(), v.integer(), v.minValue(0)) });

/** Funding outputs read per request: enough to fund many certificates. */
const UNSPENT_PAGE = 100;

async function readJson<T extends v.GenericSchema>(fetch: SafeFetch, url: string, schema: T): Promise<v.InferOutput<T>> {
  const res = await fetch(url, { headers: { accept: "application/json" } });
  if (res.status !== 200) throw new Error(`indexer answered ${res.status}`);
  const parsed = v.safeParse(schema, await res.json().catch(() => undefined));
  if (!parsed.success) throw new Error("indexer answered an unexpected shape");
  return parsed.output;
}

export function indexerFundingSource(baseUrl: string, fetch: SafeFetch): FundingSource {
  const base = baseUrl.replace(/\/+$/, "");
  return {
    async unspent(address) {
      const txos = await readJson(fetch, `${base}/api/txos/address/${encodeURIComponent(address)}/unspent?limit=${UNSPENT_PAGE}&offset=0&bsv20=false`, v.array(Txo));
      // A 1-satoshi output may be an ordinal (an NFT): spending it as a fee would burn it.
      return txos.filter((t) => !t.origin && t.satoshis > 1).map(({ txid, vout, satoshis }) => ({ txid, vout, satoshis }));
    },
    async tipHeight() {
      return (await readJson(fetch, `${base}/api/blocks/tip`, Tip)).height;
    },
  };
}
