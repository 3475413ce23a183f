import type { SafeFetch } from "../../lib/safe-fetch.js";
import type { PaidTierId } from "./tiers.js";

/** Minting the tier NFT to the buyer's wallet (spec, "Events": checkout.session.completed). */
export interface MintRequest {
  /** Stable across retries: the minting service uses it as the idempotency key. */
  jobId: string;
  paymentId: string;
  userId: string;
  tier: PaidTierId;
  walletAddress: string;
}
export interface Minter {
  /** The minted NFT's origin. Throws MintUnavailable to wait without spending an attempt. */
  mint(request: MintRequest): Promise<{ nftOrigin: string }>;
}

/** Something the mint needs is not there yet (no minting service, no wallet): the job waits. */
export class MintUnavailable extends Error {
  override name = "MintUnavailable";
}

/** Where the buyer's NFT goes: their connected wallet's ordinals address (./wallets.ts); null: the job waits. */
export interface BuyerWallet {
  walletAddressOf(userId: string): Promise<string | null>;
}

/** Why a mint job waits on an instance with no minting service. */
export const NO_MINTING_SERVICE = "No minting service is configured (MINT_SERVICE_URL); the job waits for one.";

/** An ordinal's origin as the indexer names it, `txid_vout`: what the tier check compares (./wallets.ts). */
const OUTPOINT = /^[0-9a-f]{64}_\d+$/;

/**
 * The default minter: POST {MINT_SERVICE_URL} with the request as JSON, through the guarded
 * fetcher (deadline, size cap, no redirects). The job id goes in Idempotency-Key, so a retry
 * after a lost answer cannot mint twice. The service answers 2xx `{origin}` (or `{nftOrigin}`),
 * an outpoint `txid_vout`; anything else fails the attempt, since no ordinal would ever match it.
 */
export function httpMinter(options: { url: string; token: string | undefined; fetch: SafeFetch }): Minter {
  return {
    async mint(request) {
      const headers: Record<string, string> = { "content-type": "application/json", "idempotency-key": request.jobId };
      if (options.token) headers.authorization = `Bearer ${options.token}`;
      const res = await options.fetch(options.url, { method: "POST", headers, body: JSON.stringify(request) });
      if (!res.ok) throw new Error(`The minting service answered ${res.status}.`);
      const body = (await res.json().catch(() => null)) as { origin?: unknown; nftOrigin?: unknown } | null;
      const origin = body?.nftOrigin ?? body?.origin;
      if (typeof origin !== "string" || !OUTPOINT.test(origin)) throw new Error("The minting service's answer names no origin outpoint (txid_vout).");
      return { nftOrigin: origin };
    },
  };
}
