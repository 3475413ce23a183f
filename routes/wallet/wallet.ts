import { Hono, type Context } from "hono";
import type { Kysely } from "kysely";
import * as v from "valibot";
import { getAddress } from "viem";
import type { Auth } from "../../auth.config.js";
import { addressOf, BAP_ID_PATTERN, isMemberKeyOf } from "../../lib/bap.js";
import { isCompressedPubkey, verifyBitcoinAuthToken, type BitcoinAuthPolicy } from "../../lib/bitcoin-auth.js";
import { problem, problems } from "../../lib/errors.js";
import { PROBLEM_CODES } from "../../lib/problem-codes.js";
import { readJson, readQuery } from "../../lib/validate.js";
import { findOwnedIdentity, type BapIdentity } from "../../plugins/bap-identity/store.js";
import { issueEvmChallenge, verifyEvmConnection } from "../../plugins/wallet/evm.js";
import { type42Invoice, type42WalletKey } from "../../plugins/wallet/type42.js";
import type { OrdinalsIndexer } from "../../plugins/wallet/ordinals.js";
import { OwnershipQuery, userNfts, verifyOwnership } from "../../plugins/wallet/ownership.js";
import * as wallets from "../../plugins/wallet/store.js";
import { type RouteEnv } from "../middleware.js";
import type { Database } from "../../lib/db/tables.js";
import { CONNECT_TOKEN_PATH } from "../../lib/mount-paths.js";

/**
 * Wallet connections and NFT checks (spec "Wallet"; session only, an OAuth bearer is not a
 * substitute):
 *
 *   POST   /connect            prove a wallet key for one of your identities: a Bitcoin-Auth
 *                               token over the path and `{"bapId":...}`, (connectionMethod
 *                               `evm`) a signed challenge, or
 *                               (connectionMethod `type42`) a token signed by a key the
 *                               identity's member key derives (plugins/wallet/type42.ts)
 *   POST   /connect/challenge  the message an EVM key signs for POST /connect
 *   GET    /connect[?bapId]    your connections
 *   DELETE /connect?bapId&address   remove the association only
 *   GET    /address?bapId      the identity's primary and payment addresses
 *   POST   /set-primary        the identity's wallet for receiving NFTs
 *   POST   /set-payment        the identity's wallet for payments (`yours`, `1sat`)
 *   GET    /nfts[?refresh=true]     NFTs of every connected wallet
 *   POST   /verify-ownership   origin or collection, minCount, on the primary identity's wallets
 *
 * Mounted at /api/wallet and, for the published Sigma client, at /api/auth/wallet (app.ts).
 */
export interface WalletRouteDeps {
  auth: Auth;
  db: Kysely<Database>;
  authUrl: string;
  /** The wallet-connection replay records (single use of each token). */
  bitcoinAuth: BitcoinAuthPolicy;
  indexer: OrdinalsIndexer;
  /** BETTER_AUTH_SECRET: keys the EVM challenge nonces (plugins/wallet/evm.ts). */
  secret: string;
  /** WALLET_CONNECT_ALLOW_PATH_ONLY: also accept a token over the path alone, naming no identity. @default false */
  allowPathOnly?: boolean;
}

type WalletEnv = RouteEnv<WalletRouteDeps>;
type C = Context<WalletEnv>;

/**
 * The body a connection token signs besides the path (bitcoin-auth's `body`): the identity the
 * wallet is connected to, as compact JSON. A path-only token names no account, so whoever got
 * hold of an unused one could connect the wallet (its NFTs, its tier) to their own identity.
 */
export const connectTokenBody = (bapId: string) => JSON.stringify({ bapId });
/** Payment wallets (plugins/wallet/store.ts). */
export const PAYMENT_PROVIDERS = wallets.PAYMENT_PROVIDERS;

const BapId = v.pipe(v.string(), v.regex(BAP_ID_PATTERN, "must be a BAP identity key"));
const Address = v.pipe(v.string(), v.regex(/^[1-9A-HJ-NP-Za-km-z]{25,35}$/, "must be a Bitcoin address"));
const EvmAddress = v.pipe(v.string(), v.regex(/^0x[0-9a-fA-F]{40}$/, "must be an EVM address"));
/** A connected wallet's address: Bitcoin, or EVM in any case (stored checksummed, EIP-55). */
const WalletAddress = v.pipe(
  v.union([Address, EvmAddress], "must be a Bitcoin or EVM address"),
  v.transform((a) => (a.startsWith("0x") ? getAddress(a.toLowerCase()) : a)),
);
const Provider = v.pipe(v.string(), v.regex(/^[a-z0-9][a-z0-9._-]{0,31}$/i, "must be a wallet name (letters, digits, . _ -; at most 32)"));
const Pubkey = v.pipe(v.string(), v.check((s: string) => isCompressedPubkey(s), "must be a compressed secp256k1 public key in hex"));
const AuthToken = v.pipe(v.string(), v.minLength(1), v.maxLength(1024));
const BitcoinConnect = v.strictObject({
  bapId: BapId,
  authToken: AuthToken,
  provider: Provider,
  connectionMethod: v.optional(v.literal("bitcoin-auth")),
  identityPubKey: v.optional(Pubkey),
  paymentAddress: v.optional(Address),
});
const EvmConnect = v.strictObject({
  bapId: BapId,
  provider: Provider,
  connectionMethod: v.literal("evm"),
  address: EvmAddress,
  message: v.pipe(v.string(), v.maxLength(1024)),
  signature: v.pipe(v.string(), v.regex(/^0x[0-9a-fA-F]{130}$/, "must be a 65-byte hex signature")),
});
/** The invoice number the wallet key was derived under: `invoice`, or the wallet interface's `protocolID` and `keyID`. */
const Type42Connect = v.pipe(
  v.strictObject({
    bapId: BapId,
    provider: Provider,
    connectionMethod: v.literal("type42"),
    identityPubKey: Pubkey,
    authToken: AuthToken,
    invoice: v.optional(v.pipe(v.string(), v.maxLength(1300))),
    protocolID: v.optional(v.tuple([v.number(), v.pipe(v.string(), v.maxLength(430))])),
    keyID: v.optional(v.pipe(v.string(), v.maxLength(800))),
  }),
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    const { invoice, protocolID, keyID, ...rest } = dataset.value;
    const oneForm = (invoice === undefined) !== (protocolID === undefined && keyID === undefined) && (protocolID === undefined) === (keyID === undefined);
    const parsed = !oneForm ? undefined : invoice !== undefined ? type42Invoice({ invoice }) : type42Invoice({ protocolID: protocolID!, keyID: keyID! });
    if (!parsed) {
      const message = parsed === undefined ? "send either invoice, or protocolID and keyID" : "must be a BRC-43 invoice number <level>-<protocol>-<keyID> the sdk accepts, in its canonical spelling";
      addIssue({ message, path: [{ type: "object", origin: "value", input: dataset.value, key: "invoice", value: invoice }] });
      return NEVER;
    }
    return { ...rest, invoice: parsed };
  }),
);
export const Connect = v.union([BitcoinConnect, EvmConnect, Type42Connect], "send a Bitcoin-Auth authToken, connectionMethod evm with address, message and signature, or connectionMethod type42 with identityPubKey, invoice and authToken");
export const ByBapId = v.object({ bapId: BapId });
const OptionalBapId = v.object({ bapId: v.optional(BapId) });
const ByWallet = v.object({ bapId: BapId, address: WalletAddress });
export const SetPrimary = v.strictObject({ bapId: BapId, walletAddress: WalletAddress });
export const SetPayment = v.strictObject({ bapId: BapId, walletAddress: WalletAddress, depositAddress: v.optional(Address) });
const NftsQuery = v.object({ refresh: v.optional(v.picklist(["true", "false"])) });

/** A connection as the API shows it (the Sigma client's ConnectedWallet, plus our fields). */
function view(w: wallets.WalletConnection) {
  return {
    address: w.address,
    bapId: w.bapId,
    pubkey: w.pubkey,
    provider: w.provider,
    connectionMethod: w.connectionMethod,
    isPrimary: w.isPrimary,
    isPayment: w.isPayment,
    paymentAddress: w.paymentAddress,
    connectedAt: w.connectedAt.toISOString(),
    lastVerified: w.lastVerified.toISOString(),
  };
}

/** The caller's identity `bapId`; someone else's answers like a missing one (no probing who owns what). */
async function ownedIdentity(c: C, bapId: string) {
  const row = await findOwnedIdentity(c.var.deps.db, c.var.session.user.id, bapId);
  if (!row) throw problems.notFound("You have no BAP identity with that bapId.");
  return row;
}

const noSuchWallet = () => problem(PROBLEM_CODES.WALLET_NOT_CONNECTED);

const refusedToken = (detail: string) => problem(PROBLEM_CODES.INVALID_AUTH_TOKEN, { detail });

/**
 * The wallet key's Bitcoin-Auth proof, refused with 401 unless it holds: over the path and the
 * body naming the identity, or, with `allowPathOnly`, over the path alone (as the published
 * Sigma client documents it). A Type-42 token signs the path alone: its key is derived from
 * this identity's member key, which binds it to the identity.
 */
async function walletSignature(c: C, body: { bapId: string; authToken: string; connectionMethod?: string }) {
  const { bitcoinAuth, allowPathOnly } = c.var.deps;
  // Same checks as key sign-in: signer, freshness, path (or host-bound path), canonical form, single use.
  const pathOnly = () => verifyBitcoinAuthToken(body.authToken, { requestPath: CONNECT_TOKEN_PATH, use: "wallet-connect" }, bitcoinAuth);
  if (body.connectionMethod === "type42") {
    const proof = await pathOnly();
    if (!proof.ok) throw refusedToken(`The wallet's authToken was refused; have the wallet sign ${CONNECT_TOKEN_PATH} again.`);
    return proof;
  }
  const bound = await verifyBitcoinAuthToken(body.authToken, { requestPath: CONNECT_TOKEN_PATH, body: connectTokenBody(body.bapId), use: "wallet-connect" }, bitcoinAuth);
  // A signature verifies over one message only, so at most one of the two forms can claim a token.
  const proof = bound.ok || !allowPathOnly ? bound : await pathOnly();
  if (!proof.ok) throw refusedToken(`The wallet's authToken was refused; have the wallet sign ${CONNECT_TOKEN_PATH} with the body ${connectTokenBody(body.bapId)} again.`);
  return proof;
}

/** Which key signed, and the address it controls: refused with 401 unless the proof holds. */
async function provenKey(c: C, identity: BapIdentity, body: v.InferOutput<typeof Connect>): Promise<{ address: string; pubkey: string; method: string }> {
  const { bitcoinAuth, secret, authUrl } = c.var.deps;
  if (body.connectionMethod === "evm") {
    const proof = await verifyEvmConnection({ secret, host: new URL(authUrl).host, userId: c.var.session.user.id, bapId: body.bapId, replay: bitcoinAuth.replay }, body);
    if (!proof.ok) throw problem(PROBLEM_CODES.INVALID_EVM_SIGNATURE);
    return { address: proof.address, pubkey: proof.pubkey, method: "evm" };
  }
  let expectedSigner: string | undefined;
  if (body.connectionMethod === "type42") {
    // The identity key must be this identity's member key (it derives the bapId, or is the one registered).
    if (!isMemberKeyOf(identity, body.bapId, body.identityPubKey)) throw problem(PROBLEM_CODES.NOT_MEMBER_KEY, { detail: "identityPubKey is not this identity's member key." });
    expectedSigner = type42WalletKey(body.identityPubKey, body.invoice);
  }
  const proof = await walletSignature(c, body);
  if (expectedSigner !== undefined && proof.pubkey !== expectedSigner) {
    throw refusedToken(`The authToken must be signed by the key identityPubKey derives under the invoice number (counterparty "anyone"); sign ${CONNECT_TOKEN_PATH} with that key again.`);
  }
  return { address: addressOf(proof.pubkey), pubkey: proof.pubkey, method: body.connectionMethod ?? "bitcoin-auth" };
}

async function connect(c: C) {
  const { value: body } = await readJson(c, Connect, 4 * 1024);
  const identity = await ownedIdentity(c, body.bapId);
  if (identity.suspendedAt) throw problem(PROBLEM_CODES.IDENTITY_SUSPENDED, { detail: "Confirm this identity on your account page before connecting wallets to it." });
  const key = await provenKey(c, identity, body);
  const saved = await wallets.saveConnection(c.var.deps.db, c.var.session.user.id, {
    bapId: body.bapId,
    address: key.address,
    pubkey: key.pubkey,
    provider: body.provider.toLowerCase(),
    connectionMethod: key.method,
    ...(body.connectionMethod === "type42"
      ? { identityPubkey: body.identityPubKey }
      : "authToken" in body
        ? { identityPubkey: body.identityPubKey, paymentAddress: body.paymentAddress }
        : {}),
  });
  if (saved === "taken") throw problem(PROBLEM_CODES.WALLET_TAKEN);
  return c.json({ success: true, walletAddress: saved.address, pubkey: saved.pubkey, provider: saved.provider, connectionMethod: saved.connectionMethod, connectedAt: saved.connectedAt.toISOString(), bapId: saved.bapId, isPrimary: saved.isPrimary }, 200);
}

async function evmChallenge(c: C) {
  const { value: body } = await readJson(c, v.strictObject({ bapId: BapId }), 1024);
  await ownedIdentity(c, body.bapId);
  const { secret, authUrl } = c.var.deps;
  return c.json(issueEvmChallenge({ secret, host: new URL(authUrl).host, userId: c.var.session.user.id, bapId: body.bapId }), 200);
}

async function listWallets(c: C) {
  const { bapId } = readQuery(c, OptionalBapId);
  if (bapId) await ownedIdentity(c, bapId);
  return c.json({ wallets: (await wallets.listConnections(c.var.deps.db, c.var.session.user.id, bapId)).map(view) }, 200);
}

async function disconnect(c: C) {
  const { bapId, address } = readQuery(c, ByWallet);
  if (!(await wallets.removeConnection(c.var.deps.db, c.var.session.user.id, bapId, address))) throw noSuchWallet();
  return c.json({ success: true, walletAddress: address, bapId }, 200);
}

async function walletAddress(c: C) {
  const { bapId } = readQuery(c, ByBapId);
  await ownedIdentity(c, bapId);
  const list = await wallets.listConnections(c.var.deps.db, c.var.session.user.id, bapId);
  const primary = list.find((w) => w.isPrimary) ?? null;
  const payment = list.find((w) => w.isPayment) ?? null;
  return c.json({
    bapId,
    primaryAddress: primary?.address ?? null,
    paymentAddress: payment ? (payment.paymentAddress ?? payment.address) : null,
    paymentProvider: payment?.provider ?? null,
    wallets: list.map(view),
  }, 200);
}

async function setPrimary(c: C) {
  const { value: body } = await readJson(c, SetPrimary, 1024);
  await ownedIdentity(c, body.bapId);
  const row = await wallets.makePrimaryWallet(c.var.deps.db, c.var.session.user.id, body.bapId, body.walletAddress);
  if (!row) throw noSuchWallet();
  return c.json({ success: true, bapId: body.bapId, primaryAddress: row.address }, 200);
}

async function setPayment(c: C) {
  const { value: body } = await readJson(c, SetPayment, 1024);
  await ownedIdentity(c, body.bapId);
  const row = await wallets.makePaymentWallet(c.var.deps.db, c.var.session.user.id, body.bapId, body.walletAddress, body.depositAddress);
  if (!row) throw noSuchWallet();
  if ("unsupported" in row) {
    throw problem(PROBLEM_CODES.PAYMENT_PROVIDER_NOT_SUPPORTED, { detail: `Only ${PAYMENT_PROVIDERS.join(" and ")} wallets can receive payments; this one is a ${row.unsupported.provider} wallet.` });
  }
  return c.json({ success: true, bapId: body.bapId, walletAddress: row.address, paymentAddress: row.paymentAddress ?? row.address, paymentProvider: row.provider }, 200);
}

async function nfts(c: C) {
  const { refresh } = readQuery(c, NftsQuery);
  return c.json(await userNfts(c.var.deps.db, c.var.deps.indexer, c.var.session.user.id, { fresh: refresh === "true" }), 200);
}

async function ownership(c: C) {
  const { value: query } = await readJson(c, OwnershipQuery, 1024);
  return c.json(await verifyOwnership(c.var.deps.db, c.var.deps.indexer, c.var.session.user.id, query), 200);
}

/** The wallet family (app.ts): /api/wallet and {base_url}/wallet (the published Sigma client's), signed in, same site, no-store. */
export const walletRoutes = new Hono<WalletEnv>()
  .post("/connect", connect)
  .post("/connect/challenge", evmChallenge)
  .get("/connect", listWallets)
  .delete("/connect", disconnect)
  .get("/address", walletAddress)
  .post("/set-primary", setPrimary)
  .post("/set-payment", setPayment)
  .get("/nfts", nfts)
  .post("/verify-ownership", ownership);
