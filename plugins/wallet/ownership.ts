import type { Kysely } from "kysely";
import * as v from "valibot";
import { findSelectedIdentity } from "../bap-identity/store.js";
import { IndexerError, NFT_ENTRIES_PER_ADDRESS, type Nft, type OrdinalsIndexer } from "./ordinals.js";
import { listConnections, type WalletConnection } from "./store.js";
import type { Database } from "../../lib/db/tables.js";

/**
 * NFT listings and ownership checks over a user's connected wallets: the one implementation
 * behind GET /api/wallet/nfts, POST /api/wallet/verify-ownership and the agent capability
 * `nft.verify_ownership`. A wallet the indexer could not answer for is named in
 * `failedWallets` and the answer is `incomplete` (spec, Errors 10): never a silent "no".
 */

export interface WalletNfts {
  address: string;
  nfts: Nft[];
  count: number;
  /** Why this wallet's NFTs are missing from the answer. */
  error?: string;
}

export interface NftListing {
  wallets: WalletNfts[];
  /** Every NFT of every wallet that answered. */
  nfts: Nft[];
  totalNFTs: number;
  addresses: string[];
  incomplete: boolean;
  failedWallets: string[];
  /** Entries read per address (spec, Limits). */
  limitPerAddress: number;
  fetchedAt: string;
}

/** The NFTs of each address, asked in parallel; one wallet's failure does not hide the others. */
export async function listNfts(indexer: OrdinalsIndexer, addresses: readonly string[], opts: { fresh?: boolean } = {}): Promise<NftListing> {
  const unique = [...new Set(addresses)];
  const wallets = await Promise.all(
    unique.map(async (address): Promise<WalletNfts> => {
      try {
        const nfts = await indexer.nftsOf(address, opts);
        return { address, nfts, count: nfts.length };
      } catch (err) {
        return { address, nfts: [], count: 0, error: err instanceof IndexerError ? err.message : "indexer unavailable" };
      }
    }),
  );
  const nfts = wallets.flatMap((w) => w.nfts);
  const failedWallets = wallets.filter((w) => w.error !== undefined).map((w) => w.address);
  return { wallets, nfts, totalNFTs: nfts.length, addresses: unique, incomplete: failedWallets.length > 0, failedWallets, limitPerAddress: NFT_ENTRIES_PER_ADDRESS, fetchedAt: new Date().toISOString() };
}

/** The addresses that can hold 1Sat ordinals: Bitcoin wallets (an EVM account holds none). */
const ordinalAddresses = (list: WalletConnection[]) => list.filter((c) => c.connectionMethod !== "evm").map((c) => c.address);

/** The NFTs of all the user's connected Bitcoin wallets, for GET /api/wallet/nfts. */
export async function userNfts(db: Kysely<Database>, indexer: OrdinalsIndexer, userId: string, opts: { fresh?: boolean } = {}): Promise<NftListing> {
  return listNfts(indexer, ordinalAddresses(await listConnections(db, userId)), opts);
}

/** What to look for: one origin (`txid_vout`) or one collection id; at least `minCount` of them. */
export const OwnershipQuery = v.pipe(
  v.strictObject({
    origin: v.optional(v.pipe(v.string(), v.regex(/^[0-9a-f]{64}_\d+$/, "must be an outpoint txid_vout"))),
    collection: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(200))),
    minCount: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(NFT_ENTRIES_PER_ADDRESS)), 1),
  }),
  v.check((q) => Boolean(q.origin) !== Boolean(q.collection), "give exactly one of origin or collection"),
);
export type OwnershipQuery = v.InferOutput<typeof OwnershipQuery>;

export interface OwnershipAnswer {
  owns: boolean;
  count: number;
  minCount: number;
  nfts: Nft[];
  bapId: string | null;
  addresses: string[];
  /** Some wallet could not be checked: `owns: false` then means "not found so far", not "no". */
  incomplete: boolean;
  failedWallets: string[];
  message?: string;
}

/** The collection an NFT belongs to, as 1Sat collection items record it in their MAP data. */
function collectionOf(nft: Nft): string | undefined {
  const map = nft.origin?.data?.map as { subTypeData?: unknown } | undefined;
  let sub = map?.subTypeData;
  if (typeof sub === "string") {
    try {
      sub = JSON.parse(sub);
    } catch {
      return undefined;
    }
  }
  const id = (sub as { collectionId?: unknown } | undefined)?.collectionId;
  return typeof id === "string" ? id : undefined;
}

const matches = (query: OwnershipQuery) => (nft: Nft) => (query.origin ? nft.origin?.outpoint === query.origin : collectionOf(nft) === query.collection);

/** One NFT matching a query, and the connected wallet that holds it. */
export interface HeldNft {
  nft: Nft;
  walletAddress: string;
}

/**
 * The first NFT of the origin or collection in any of the user's connected Bitcoin wallets
 * (every identity's) that `accept` takes, or null when none holds one. `accept` is given every
 * match at once (it may look them up together) and answers the one it takes, or null. When it
 * takes none but some wallet could not be read, the answer is unknown: an IndexerError, never
 * a silent "no".
 */
export async function findHeldNft(
  db: Kysely<Database>,
  indexer: OrdinalsIndexer,
  userId: string,
  query: Omit<OwnershipQuery, "minCount">,
  accept: (held: HeldNft[]) => Promise<HeldNft | null>,
): Promise<HeldNft | null> {
  const listing = await userNfts(db, indexer, userId);
  const match = matches({ ...query, minCount: 1 });
  const taken = await accept(listing.wallets.flatMap((wallet) => wallet.nfts.filter(match).map((nft) => ({ nft, walletAddress: wallet.address }))));
  if (taken) return taken;
  if (listing.incomplete) throw new IndexerError(`the indexer did not answer for ${listing.failedWallets.length} wallet(s)`);
  return null;
}

/**
 * Whether the wallets of the user's primary BAP identity (in force) hold at least `minCount`
 * NFTs of the origin or collection, read through the indexer's short cache like GET /api/wallet/nfts.
 */
export async function verifyOwnership(db: Kysely<Database>, indexer: OrdinalsIndexer, userId: string, query: OwnershipQuery): Promise<OwnershipAnswer> {
  const identity = await findSelectedIdentity(db, userId);
  const base = { minCount: query.minCount, bapId: identity?.bapId ?? null };
  if (!identity) return { ...base, owns: false, count: 0, nfts: [], addresses: [], incomplete: false, failedWallets: [], message: "You have no BAP identity: register one and connect a wallet to it." };
  const addresses = ordinalAddresses(await listConnections(db, userId, identity.bapId));
  if (!addresses.length) return { ...base, owns: false, count: 0, nfts: [], addresses, incomplete: false, failedWallets: [], message: "No wallet is connected to your primary identity." };
  const listing = await listNfts(indexer, addresses);
  const found = listing.nfts.filter(matches(query));
  const owns = found.length >= query.minCount;
  const answer: OwnershipAnswer = { ...base, owns, count: found.length, nfts: found, addresses: listing.addresses, incomplete: listing.incomplete, failedWallets: listing.failedWallets };
  if (!owns && listing.incomplete) answer.message = `Not every wallet could be checked (the NFT indexer did not answer for ${listing.failedWallets.length}); try again later.`;
  return answer;
}
