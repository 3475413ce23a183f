import type { Kysely } from "kysely";
import { problem } from "../../lib/errors.js";
import type { Logger } from "../../lib/logger.js";
import { setSessionsTier } from "../core-store/sessions.js";
import { PROBLEM_CODES } from "../../lib/problem-codes.js";
import { isTierId, PAID_TIERS_HIGHEST_FIRST, type PaidTierId, type TierId } from "./tiers.js";
import type { Database } from "../../lib/db/tables.js";
import { findRecordedTier, setRecordedTier } from "../core-store/users.js";

/**
 * Spec, "States and transitions": ownership of the tier NFT determines the tier. Whether a
 * user owns one is the NFT-ownership service's answer (the ordinals indexer behind the
 * wallet routes, adapted in ./wallets.ts); this module only asks it, through this interface,
 * and caches the answer.
 */
export interface TierNft {
  /** The ordinal's origin outpoint. */
  nftOrigin: string;
  /** The connected wallet that holds it. */
  walletAddress: string;
  /** The end of the period paid for; absent: the checker knows no period (it does not end). */
  periodEnd?: Date;
  /** Whether the subscription behind it is set to renew at `periodEnd`. */
  renews?: boolean;
}
export interface TierOwnershipChecker {
  /** The user's NFT of `tier` in any connected wallet, or null. Throws when it cannot tell. */
  ownsTierNft(userId: string, tier: PaidTierId): Promise<TierNft | null>;
}
/**
 * Nobody owns a tier NFT: for auth instances that never check a tier (the db scripts). The
 * server checks connected wallets (./wallets.ts).
 */
export const NO_TIER_NFTS: TierOwnershipChecker = { ownsTierNft: async () => null };

/** GET /api/subscription/status (spec, "Subscription"). */
export interface TierStatus {
  tier: TierId;
  isActive: boolean;
  nftOrigin?: string;
  walletAddress?: string;
  /** When ownership was last checked (ISO 8601); present with an NFT. */
  lastVerified?: string;
  /** When the paid period ends (ISO 8601): the tier falls back to `free` then unless it is renewed. */
  periodEnd?: string;
  /** Whether the subscription renews at `periodEnd` (false: cancelled, or over). */
  renews?: boolean;
}

/** Writes the user's tier where better-auth keeps it (user row and cached sessions). */
export type TierWriter = (userId: string, tier: TierId) => Promise<void>;

export interface TierServiceOptions {
  db: Kysely<Database>;
  checker: TierOwnershipChecker;
  logger: Logger;
  /** How long an answer is reused. @default 300000 (5 minutes) */
  ttlMs?: number;
  /** Users whose answer is kept at once. @default 10000 */
  maxEntries?: number;
}

export type TierService = ReturnType<typeof createTierService>;

export function createTierService({ db, checker, logger, ttlMs = 5 * 60_000, maxEntries = 10_000 }: TierServiceOptions) {
  const cache = new Map<string, { status: TierStatus; at: number }>();
  // Until better-auth is up (plugins/subscriptions binds it at init), plain updates of our columns.
  let writeTier: TierWriter = async (userId, tier) => {
    await setRecordedTier(db, userId, tier);
  };

  async function storedTier(userId: string): Promise<TierId> {
    const recorded = await findRecordedTier(db, userId);
    return isTierId(recorded) ? recorded : "free";
  }

  async function derive(userId: string): Promise<TierStatus> {
    const lastVerified = new Date().toISOString();
    for (const tier of PAID_TIERS_HIGHEST_FIRST) {
      const nft = await checker.ownsTierNft(userId, tier);
      if (!nft) continue;
      const period = nft.periodEnd ? { periodEnd: nft.periodEnd.toISOString(), renews: nft.renews ?? false } : {};
      return { tier, isActive: true, nftOrigin: nft.nftOrigin, walletAddress: nft.walletAddress, lastVerified, ...period };
    }
    return { tier: "free", isActive: true };
  }

  /** Keeps `user.subscriptionTier` (and so the session's) in step with what ownership says. */
  async function record(userId: string, tier: TierId) {
    if ((await storedTier(userId)) === tier) return;
    await writeTier(userId, tier);
    await setSessionsTier(db, userId, tier);
  }

  function remember(userId: string, status: TierStatus) {
    cache.delete(userId);
    if (cache.size >= maxEntries) cache.delete(cache.keys().next().value!);
    cache.set(userId, { status, at: Date.now() });
  }

  /**
   * The user's tier from NFT ownership, reused for `ttlMs`. When the check fails, the last
   * verified answer (however old) stands unless its period has ended (then `free`); with none, a 503 problem rather than a silent `free`.
   */
  async function status(userId: string): Promise<TierStatus> {
    const cached = cache.get(userId);
    const ended = cached?.status.periodEnd !== undefined && Date.parse(cached.status.periodEnd) <= Date.now();
    // Reused for ttlMs, but never past the end of the period it shows.
    if (cached && !ended && Date.now() - cached.at < ttlMs) return cached.status;
    let fresh: TierStatus;
    try {
      fresh = await derive(userId);
    } catch (err) {
      logger.warn("tier ownership check failed", { err, userId });
      if (cached) return ended ? { tier: "free", isActive: true } : cached.status;
      throw problem(PROBLEM_CODES.OWNERSHIP_UNAVAILABLE, { headers: { "retry-after": "30" } });
    }
    remember(userId, fresh);
    await record(userId, fresh.tier);
    return fresh;
  }

  return {
    bindWriter(writer: TierWriter) {
      writeTier = writer;
    },
    status,
    /** Drops the user's reused answer: a webhook changed a period they may hold. */
    forget(userId: string) {
      cache.delete(userId);
    },
    /** The tier for enforcing limits: ownership when it can be checked, else the tier last recorded. */
    async tierOf(userId: string): Promise<TierId> {
      try {
        return (await status(userId)).tier;
      } catch {
        return storedTier(userId);
      }
    },
  };
}
