import { createHash } from "node:crypto";
import { parseAuthToken, verifyAuthToken } from "bitcoin-auth";
import { PublicKey, Utils } from "@bsv/sdk";
import type { Redis } from "ioredis";

/**
 * The only Bitcoin-Auth verifier in the project. Token: `pubkey|scheme|timestamp|path|sig`,
 * signed message `path|timestamp|sha256hex(body)`. `verifyAuthToken` from `bitcoin-auth`
 * checks the signature but, on its own, accepts tokens of any age, timestamps that are not
 * dates and (for BRC-77) a token whose named pubkey is not the key that signed; every one
 * of those is checked here, and a token is accepted at most once (replay cache).
 */
export const MAX_TOKEN_LENGTH = 1024;
export const MAX_SKEW_MS = 5 * 60 * 1000;
const COMPRESSED_PUBKEY = /^0[23][0-9a-f]{64}$/;
// RFC 3339 / ISO 8601 UTC timestamp as `new Date().toISOString()` writes it (ms optional).
const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/;

export interface ReplayCache {
  /** Records `key`; false when it was already recorded within its lifetime. */
  claim(key: string, ttlMs: number): Promise<boolean>;
}

export function memoryReplayCache(maxEntries = 100_000): ReplayCache {
  const seen = new Map<string, number>();
  return {
    async claim(key, ttlMs) {
      const now = Date.now();
      const expires = seen.get(key);
      if (expires !== undefined && expires > now) return false;
      if (seen.size >= maxEntries) {
        for (const [k, exp] of seen) if (exp <= now) seen.delete(k);
        // Still full of live entries: drop the oldest rather than grow without bound.
        if (seen.size >= maxEntries) seen.delete(seen.keys().next().value as string);
      }
      seen.set(key, now + ttlMs);
      return true;
    },
  };
}

export function redisReplayCache(redis: Redis, prefix = "idp:bitcoin-auth:"): ReplayCache {
  return {
    async claim(key, ttlMs) {
      return (await redis.set(prefix + key, "1", "PX", ttlMs, "NX")) === "OK";
    },
  };
}

export interface BitcoinAuthTarget {
  /** The exact request path (with query, if the route signs one) the token must name. */
  requestPath: string;
  /** The exact raw body; bound into the signature when present and non-empty. */
  body?: string;
}

export type BitcoinAuthResult =
  | { ok: true; pubkey: string; scheme: "brc77" | "bsm"; timestamp: Date }
  | { ok: false; reason: string };

const fail = (reason: string): BitcoinAuthResult => ({ ok: false, reason });

/** BRC-77 signature bytes: version (4) | signer pubkey (33) | recipient | keyID | DER sig. */
function brc77Signer(signatureBase64: string): string | null {
  try {
    const bytes = Utils.toArray(signatureBase64, "base64");
    if (bytes.length < 4 + 33 + 1 + 32 + 8) return null;
    return Utils.toHex(bytes.slice(4, 37));
  } catch {
    return null;
  }
}

export async function verifyBitcoinAuthToken(
  token: string | null | undefined,
  target: BitcoinAuthTarget,
  opts: { replay: ReplayCache; now?: number; maxSkewMs?: number },
): Promise<BitcoinAuthResult> {
  if (!token) return fail("missing token");
  if (token.length > MAX_TOKEN_LENGTH) return fail("token too long");
  const parsed = parseAuthToken(token);
  if (!parsed) return fail("malformed token");
  const { pubkey, scheme, timestamp, requestPath, signature } = parsed;
  if (!COMPRESSED_PUBKEY.test(pubkey)) return fail("pubkey is not a compressed secp256k1 key");
  try {
    PublicKey.fromString(pubkey);
  } catch {
    return fail("pubkey is not a valid point");
  }
  if (!ISO_TIMESTAMP.test(timestamp)) return fail("timestamp is not an ISO 8601 UTC time");
  const signedAt = new Date(timestamp);
  if (Number.isNaN(signedAt.getTime())) return fail("timestamp is not a date");
  const now = opts.now ?? Date.now();
  const skew = opts.maxSkewMs ?? MAX_SKEW_MS;
  if (Math.abs(now - signedAt.getTime()) > skew) return fail("token is stale or from the future");
  if (requestPath !== target.requestPath) return fail("token was made for another path");
  if (scheme === "brc77" && brc77Signer(signature) !== pubkey) return fail("signer is not the named key");

  let valid = false;
  try {
    valid = verifyAuthToken(token, { requestPath: target.requestPath, timestamp: new Date(now).toISOString(), body: target.body || undefined });
  } catch {
    valid = false;
  }
  if (!valid) return fail("bad signature");
  const key = createHash("sha256").update(token).digest("base64url");
  // Keep the replay record for the whole window in which the token could still be fresh.
  if (!(await opts.replay.claim(key, 2 * skew + 1000))) return fail("token was already used");
  return { ok: true, pubkey, scheme, timestamp: signedAt };
}

/** Whether `value` is a compressed secp256k1 public key in hex that decodes to a point. */
export function isCompressedPubkey(value: unknown): value is string {
  if (typeof value !== "string" || !COMPRESSED_PUBKEY.test(value)) return false;
  try {
    PublicKey.fromString(value);
    return true;
  } catch {
    return false;
  }
}
