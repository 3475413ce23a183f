import type { Kysely } from "kysely";
import type { OrdinalsIndexer } from "../wallet/ordinals.js";
import { findHeldNft, type HeldNft } from "../wallet/ownership.js";
import { findPrimaryOrdinalsWallet } from "../wallet/store.js";
import { currentOrigins, type Period } from "./mint-job-store.js";
import type { BuyerWallet } from "./minter.js";
import type { TierOwnershipChecker } from "./ownership.js";
import type { PaidTierId } from "./tiers.js";
import type { Database } from "../../lib/db/tables.js";

/**
 * The wallet plugin behind the subscription interfaces (spec, "States and transitions": a paid
 * checkout leads to minting to the buyer's connected wallet; ownership of the NFT determines
 * the tier). The only place the two plugins meet.
 */

/** Each paid tier's NFT: the 1Sat collection its items are minted into (TIER_NFT_PLUS, TIER_NFT_PRO). */
export type TierCollections = Readonly<Record<PaidTierId, string | undefined>>;

/**
 * A tier is held when any connected Bitcoin wallet of the user (any identity) holds a tier NFT:
 * an item of the tier's collection, as the ordinals indexer reports it (its short cache
 * included), that this service minted for that tier (its origin is the `nftOrigin` of a
 * completed mint job of the tier). What an ordinal's own metadata says proves nothing: anyone
 * can inscribe one naming our collection. The origin stays with the ordinal when it moves, so
 * the tier follows the NFT to whoever holds it. A tier with no collection configured is held
 * by nobody, and the indexer is not asked. When no wallet shows the NFT but some wallet could
 * not be read, this throws: the tier service then keeps the last verified answer, or answers 503.
 */
export function walletTierOwnership(options: { db: Kysely<Database>; indexer: OrdinalsIndexer; collections: TierCollections }): TierOwnershipChecker {
  const { db, indexer, collections } = options;
  return {
    async ownsTierNft(userId, tier) {
      const collection = collections[tier];
      if (!collection) return null;
      const originOf = (held: HeldNft) => held.nft.origin?.outpoint;
      let period: Period | undefined;
      const mintedByUs = async (candidates: HeldNft[]) => {
        const current = await currentOrigins(db, tier, candidates.map(originOf).filter((o) => o !== undefined));
        // Of several current ones, the one paid furthest ahead.
        let best: HeldNft | null = null;
        for (const held of candidates) {
          const p = current.get(originOf(held) ?? "");
          if (p && (!period || p.periodEnd > period.periodEnd)) [best, period] = [held, p];
        }
        return best;
      };
      const held = await findHeldNft(db, indexer, userId, { collection }, mintedByUs);
      if (!held || !period) return null;
      return { nftOrigin: originOf(held)!, walletAddress: held.walletAddress, periodEnd: period.periodEnd, renews: renews(period) };
    },
  };
}

/** Whether Stripe will try to extend the period: a subscription that is not cancelled or over. */
const renews = (period: Period) => !period.cancelAtPeriodEnd && ["active", "trialing", "past_due"].includes(period.subscriptionStatus ?? "");

/** Mint jobs go to the primary wallet of the buyer's primary identity; with none, they wait. */
export function primaryBuyerWallet(db: Kysely<Database>): BuyerWallet {
  return { walletAddressOf: async (userId) => (await findPrimaryOrdinalsWallet(db, userId))?.address ?? null };
}
