import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { getAddress, hashMessage, recoverPublicKey, verifyMessage, type Hex } from "viem";
import type { ReplayCache } from "../../lib/bitcoin-auth.js";

/**
 * The EVM connection path (spec "Wallet": the EVM challenge). The server issues a challenge
 * message naming this service, the identity and a nonce; the EVM key signs it (EIP-191
 * personal_sign); viem checks the signature against the claimed address. The nonce is an
 * HMAC of who asked, for which identity, and when, under the service secret, so nothing is
 * stored until it is used: it is bound to the signed-in user, lives five minutes and is
 * accepted once (replay cache).
 */
export const EVM_CHALLENGE_TTL_MS = 5 * 60 * 1000;

export interface EvmChallenge {
  nonce: string;
  message: string;
  issuedAt: string;
  expiresAt: string;
}

function mac(secret: string, userId: string, bapId: string, issuedAt: string, random: string): string {
  return createHmac("sha256", secret).update(["wallet-evm-challenge", userId, bapId, issuedAt, random].join("|")).digest("base64url");
}

/** The exact text the wallet signs; verification rebuilds it and compares it whole. */
function challengeMessage(host: string, bapId: string, nonce: string, issuedAt: string): string {
  return `${host} asks you to connect this Ethereum account to BAP identity ${bapId}.\n\nNonce: ${nonce}\nIssued At: ${issuedAt}`;
}

export function issueEvmChallenge(opts: { secret: string; host: string; userId: string; bapId: string; now?: Date }): EvmChallenge {
  const now = opts.now ?? new Date();
  const issuedAt = now.toISOString();
  const random = randomBytes(16).toString("base64url");
  const nonce = `${random}.${mac(opts.secret, opts.userId, opts.bapId, issuedAt, random)}`;
  return { nonce, issuedAt, message: challengeMessage(opts.host, opts.bapId, nonce, issuedAt), expiresAt: new Date(now.getTime() + EVM_CHALLENGE_TTL_MS).toISOString() };
}

export interface EvmProof {
  address: string;
  message: string;
  signature: string;
}

export type EvmResult = { ok: true; address: string; pubkey: string } | { ok: false; reason: string };

/** Whether `proof` answers a challenge we issued to `userId` for `bapId`, fresh and unused, signed by `address`. */
export async function verifyEvmConnection(opts: { secret: string; host: string; userId: string; bapId: string; replay: ReplayCache; now?: number }, proof: EvmProof): Promise<EvmResult> {
  const fields = /\nNonce: ([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})\nIssued At: (\S+)$/.exec(proof.message);
  if (!fields) return { ok: false, reason: "not a challenge of ours" };
  const [, random, tag, issuedAt] = fields as unknown as [string, string, string, string];
  if (proof.message !== challengeMessage(opts.host, opts.bapId, `${random}.${tag}`, issuedAt)) return { ok: false, reason: "challenge for another identity or service" };
  const expected = Buffer.from(mac(opts.secret, opts.userId, opts.bapId, issuedAt, random));
  if (expected.length !== tag.length || !timingSafeEqual(expected, Buffer.from(tag))) return { ok: false, reason: "challenge was not issued to this user" };
  const age = (opts.now ?? Date.now()) - Date.parse(issuedAt);
  if (!(age >= -30_000 && age <= EVM_CHALLENGE_TTL_MS)) return { ok: false, reason: "challenge expired" };
  let address: string;
  try {
    address = getAddress(proof.address);
    if (!(await verifyMessage({ address: address as Hex, message: proof.message, signature: proof.signature as Hex }))) return { ok: false, reason: "bad signature" };
  } catch {
    return { ok: false, reason: "bad signature" };
  }
  if (!(await opts.replay.claim(`evm|${random}`, EVM_CHALLENGE_TTL_MS + 60_000))) return { ok: false, reason: "challenge was already used" };
  const pubkey = await recoverPublicKey({ hash: hashMessage(proof.message), signature: proof.signature as Hex });
  return { ok: true, address, pubkey };
}
