import { randomBytes } from "node:crypto";
import { ProtoWallet, Utils } from "@bsv/sdk";
import { Hono, type Context } from "hono";
import type { Kysely } from "kysely";
import * as v from "valibot";
import type { Auth } from "../../auth.config.js";
import { BAP_ID_PATTERN } from "../../lib/bap.js";
import { isCompressedPubkey } from "../../lib/bitcoin-auth.js";
import { problem, problems } from "../../lib/errors.js";
import { PROBLEM_CODES } from "../../lib/problem-codes.js";
import { readJson, readQuery } from "../../lib/validate.js";
import { findOwnedIdentity } from "../../plugins/bap-identity/store.js";
import { closeChallenge, findBinding, listVerifiedBindingsOfKey, openChallenge, openChallengeOf, revokeBinding, type WalletBinding } from "../../plugins/certificates/binding-store.js";
import { refuseOtherSites, signedIn, type RouteEnv } from "../middleware.js";
import type { Database } from "../../lib/db/tables.js";

/**
 * Wallet binding (spec resource "bapWalletBinding": bapId, verifiedAt), mounted at
 * /api/certificates/wallet-binding. The owner of a BAP identity proves a BRC-100 wallet's
 * identity key signs for it:
 *
 *   POST /challenge {bapId, identityKey}   signed-in owner -> {bapId, identityKey, challenge, protocolID, keyID, expiresAt}
 *   POST /verify    {bapId, signature}     signed-in owner; the wallet's signature over the challenge -> the binding
 *   GET  /resolve?bapId | ?identityKey     public: verified bindings only
 *   POST /revoke    {bapId}                signed-in owner: the binding is removed
 *
 * The wallet signs the challenge's UTF-8 bytes with createSignature({protocolID: [2, "bap wallet
 * binding"], keyID: "1", counterparty: "anyone"}): a BRC-3 signature anyone can check against the
 * identity key, which is how we check it.
 */
export interface WalletBindingDeps {
  auth: Auth;
  db: Kysely<Database>;
  authUrl: string;
}

type BindingEnv = RouteEnv<WalletBindingDeps>;
type C = Context<BindingEnv>;

export const BINDING_PROTOCOL: [2, string] = [2, "bap wallet binding"];
export const BINDING_KEY_ID = "1";
/** How long a challenge may be signed. */
const CHALLENGE_TTL_MS = 10 * 60_000;

const BapId = v.pipe(v.string(), v.regex(BAP_ID_PATTERN, "must be a BAP identity key"));
const IdentityKey = v.pipe(v.string(), v.check((s: string) => isCompressedPubkey(s), "must be a compressed secp256k1 public key in hex"));
export const ChallengeRequest = v.strictObject({ bapId: BapId, identityKey: IdentityKey });
export const VerifyRequest = v.strictObject({ bapId: BapId, signature: v.pipe(v.string(), v.regex(/^[0-9a-fA-F]{16,200}$/, "must be a DER signature in hex")) });
export const RevokeRequest = v.strictObject({ bapId: BapId });
const ResolveQuery = v.union([v.strictObject({ bapId: BapId }), v.strictObject({ identityKey: IdentityKey })], "give bapId or identityKey");

async function ownedIdentity(c: C, bapId: string) {
  if (!(await findOwnedIdentity(c.var.deps.db, c.var.session.user.id, bapId))) throw problems.notFound("You have no BAP identity with that bapId.");
}

const view = (b: WalletBinding) => ({ bapId: b.bapId, identityKey: b.identityKey, verifiedAt: b.verifiedAt?.toISOString() ?? null });

async function challenge(c: C) {
  const { value } = await readJson(c, ChallengeRequest);
  await ownedIdentity(c, value.bapId);
  const expiresAt = new Date(Date.now() + CHALLENGE_TTL_MS);
  const message = `Bind wallet identity key ${value.identityKey} to BAP identity ${value.bapId} at ${c.var.deps.authUrl}. Nonce: ${randomBytes(16).toString("hex")}`;
  await openChallenge(c.var.deps.db, c.var.session.user.id, value.bapId, value.identityKey, message, expiresAt);
  return c.json({ bapId: value.bapId, identityKey: value.identityKey, challenge: message, protocolID: BINDING_PROTOCOL, keyID: BINDING_KEY_ID, expiresAt: expiresAt.toISOString() });
}

async function verify(c: C) {
  const { db } = c.var.deps;
  const { value } = await readJson(c, VerifyRequest);
  await ownedIdentity(c, value.bapId);
  const binding = await findBinding(db, value.bapId);
  const open = binding && openChallengeOf(binding);
  const refused = () => problem(PROBLEM_CODES.INVALID_WALLET_SIGNATURE);
  if (!binding || !open || !binding.challengeExpiresAt || binding.challengeExpiresAt.getTime() < Date.now()) throw refused();
  const { valid } = await new ProtoWallet("anyone")
    .verifySignature({ data: Utils.toArray(open.message, "utf8"), signature: Utils.toArray(value.signature, "hex"), protocolID: BINDING_PROTOCOL, keyID: BINDING_KEY_ID, counterparty: open.identityKey })
    .catch(() => ({ valid: false }));
  // Single use: the challenge is spent whether or not the signature held.
  const at = new Date();
  const closed = await closeChallenge(db, value.bapId, binding.challenge!, valid ? { identityKey: open.identityKey, at } : null);
  if (!valid || !closed) throw refused();
  return c.json(view((await findBinding(db, value.bapId))!));
}

async function resolve(c: C) {
  const query = readQuery(c, ResolveQuery);
  const { db } = c.var.deps;
  if ("bapId" in query) {
    const binding = await findBinding(db, query.bapId);
    if (!binding?.verifiedAt) throw problem(PROBLEM_CODES.WALLET_BINDING_NOT_FOUND);
    return c.json(view(binding));
  }
  const bindings = await listVerifiedBindingsOfKey(db, query.identityKey);
  if (!bindings.length) throw problem(PROBLEM_CODES.WALLET_BINDING_NOT_FOUND);
  return c.json({ identityKey: query.identityKey, bindings: bindings.map(view) });
}

async function revoke(c: C) {
  const { value } = await readJson(c, RevokeRequest);
  await ownedIdentity(c, value.bapId);
  if (!(await revokeBinding(c.var.deps.db, c.var.session.user.id, value.bapId))) throw problem(PROBLEM_CODES.WALLET_BINDING_NOT_FOUND);
  return c.json({ bapId: value.bapId, revoked: true });
}

const ownerOnly = [signedIn, refuseOtherSites<BindingEnv>((c) => c.var.deps.authUrl)] as const;

export const walletBindingRoutes = new Hono<BindingEnv>()
  .post("/challenge", ...ownerOnly, challenge)
  .post("/verify", ...ownerOnly, verify)
  .get("/resolve", resolve)
  .post("/revoke", ...ownerOnly, revoke);
