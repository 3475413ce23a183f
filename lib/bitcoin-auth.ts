import { createHash } from "node:crypto";
import { parseAuthToken, verifyAuthToken } from "bitcoin-auth";
import { BigNumber, BSM, Signature, Utils } from "@bsv/sdk";
import type { Redis } from "ioredis";
import { ServiceUnavailable } from "./errors.js";
import { brc77Parts, uncompressedPoint, verifyBrc77ForAnyone } from "./brc77.js";

/**
 * The only Bitcoin-Auth verifier in the project. Token: `pubkey|scheme|timestamp|path|sig`,
 * signed message `path|timestamp|sha256hex(body)`. `verifyAuthToken` from `bitcoin-auth`
 * checks the signature but, on its own, accepts tokens of any age, timestamps that are not
 * dates and (for BRC-77) a token whose named pubkey is not the key that signed; every one
 * of those is checked here, and a signed request is accepted at most once (replay cache).
 *
 * ECDSA signatures are malleable: (r, n - s) is as valid as (r, s), and BSM's header byte
 * (recovery id, compressed flag) is not covered by the signature at all, so one captured
 * token had 16 (BSM) or 2 (BRC-77) valid spellings. Replays are therefore recorded by what
 * was signed (key, scheme, path, timestamp, body hash), never by the token text, and only
 * canonical signatures are accepted: low S (BIP 62 rule 5 / BIP 146 LOW_S), strict DER for
 * BRC-77, and for BSM the one header byte (31..34, compressed key) whose recovery id
 * recovers the named key.
 */
export const MAX_TOKEN_LENGTH = 1024;
export const MAX_SKEW_MS = 5 * 60 * 1000;
const COMPRESSED_PUBKEY = /^0[23][0-9a-f]{64}$/;
// secp256k1 group order n; a canonical signature has s <= n/2.
const HALF_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n >> 1n;
// RFC 3339 / ISO 8601 UTC timestamp as `new Date().toISOString()` writes it (ms optional).
const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/;

export interface ReplayCache {
  /** Records `key`; false when it was already recorded within its lifetime (or cannot be recorded). */
  claim(key: string, ttlMs: number): Promise<boolean>;
}

/**
 * Process-local replay records. When it is full of live records it refuses new claims
 * instead of evicting one: evicting would let a flood of fresh tokens push out the record
 * of a captured one and make it replayable (fail closed, OWASP ASVS 2.9.x / 3.x). Records
 * live only as long as their token could still be fresh, and the sweep of expired records
 * runs at most once a second, so a flood costs bounded work per claim.
 */
export function memoryReplayCache(maxEntries = 100_000): ReplayCache {
  const seen = new Map<string, number>();
  let nextSweep = 0;
  return {
    async claim(key, ttlMs) {
      const now = Date.now();
      const expires = seen.get(key);
      if (expires !== undefined && expires > now) return false;
      if (seen.size >= maxEntries && now >= nextSweep) {
        nextSweep = now + 1000;
        for (const [k, exp] of seen) if (exp <= now) seen.delete(k);
      }
      if (seen.size >= maxEntries && expires === undefined) return false;
      seen.set(key, now + ttlMs);
      return true;
    },
  };
}

/**
 * Replay records in Redis, shared by every instance. While Redis does not answer a claim fails
 * the request with a 503 (fail closed): a token is never accepted without its record.
 */
export function redisReplayCache(redis: Redis, prefix = "idp:bitcoin-auth:"): ReplayCache {
  return {
    async claim(key, ttlMs) {
      let reply: string | null;
      try {
        reply = await redis.set(prefix + key, "1", "PX", ttlMs, "NX");
      } catch (err) {
        throw new ServiceUnavailable("redis", err);
      }
      return reply === "OK";
    },
  };
}

export interface BitcoinAuthTarget {
  /**
   * The exact request path (with query, if the route signs one) the token must name, alone
   * or (host-bound form) after this server's origin.
   */
  requestPath: string;
  /** The exact raw body; bound into the signature when present and non-empty. */
  body?: string;
  /**
   * What the token is for, when one request carries two tokens over the same signed data
   * (sign-up's enrolment proof): each use is claimed in the replay cache on its own.
   */
  use?: string;
}

export type BitcoinAuthResult =
  | { ok: true; pubkey: string; scheme: "brc77" | "bsm"; timestamp: Date }
  | { ok: false; reason: string };

const fail = (reason: string): BitcoinAuthResult => ({ ok: false, reason });

/** The signature's bytes, when `text` is their canonical base64 (no other spelling is accepted). */
function signatureBytes(text: string): number[] | null {
  try {
    const bytes = Utils.toArray(text, "base64");
    return Utils.toBase64(bytes) === text ? bytes : null;
  } catch {
    return null;
  }
}

const isLowS = (s: BigNumber) => BigInt("0x" + (s.toHex() || "0")) <= HALF_N;

/** The signature as the only spelling we accept: low S, and strict DER (BRC-77) or the one BSM header. */
function isCanonicalSignature(scheme: "brc77" | "bsm", pubkey: string, bytes: number[], message: string): boolean {
  try {
    if (scheme === "brc77") {
      const parts = brc77Parts(bytes);
      if (!parts) return false;
      const sig = Signature.fromDER(parts.der);
      return Utils.toHex(sig.toDER() as number[]) === Utils.toHex(parts.der) && isLowS(sig.s);
    }
    // BSM compact signature: header 27 + recovery id (+4 for a compressed key) | r | s.
    const header = bytes[0]!;
    if (bytes.length !== 65 || header < 31 || header > 34) return false;
    const sig = Signature.fromCompact(bytes);
    if (!isLowS(sig.s)) return false;
    const recovered = sig.RecoverPublicKey(header - 31, new BigNumber(BSM.magicHash(Utils.toArray(message, "utf8"))));
    return recovered.toString() === pubkey;
  } catch {
    return false;
  }
}

const sha256Hex = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

/** How this server verifies Bitcoin-Auth tokens; built once (bitcoinAuthPolicy) and passed down. */
export interface BitcoinAuthPolicy {
  replay: ReplayCache;
  /** This server's base URL (AUTH_URL, an origin unless it has a path): the host-bound form names `origin + path`. */
  origin?: string;
  /** Accept only the host-bound form (BITCOIN_AUTH_REQUIRE_HOST_BINDING). @default false */
  requireHostBinding?: boolean;
  now?: number;
  maxSkewMs?: number;
  /** Told of each token refused as already used (the metrics count them). */
  onReplay?: () => void;
}

/** The policy for one replay cache, from the settings. */
export function bitcoinAuthPolicy(replay: ReplayCache, settings: { authUrl: string; bitcoinAuthRequireHostBinding: boolean }, onReplay?: () => void): BitcoinAuthPolicy {
  // AUTH_URL as written: with a path, the host-bound form names the public URL under it (lib/path-prefix.ts).
  return { replay, origin: settings.authUrl, requireHostBinding: settings.bitcoinAuthRequireHostBinding, onReplay };
}

/**
 * Whether the token's request path names this request. The signed data has no host, so a
 * path-only token (`/api/auth/sign-in/sigma`, as the published Sigma client signs) made to
 * sign in at another service with the same route is just as valid here, for as long as it
 * is fresh: a relay. The host-bound form names this server's absolute URL
 * (`https://idp.example/api/auth/sign-in/sigma`, AUTH_URL + path) and cannot be used
 * anywhere else; with `requireHostBinding` it is the only form accepted. (bitcoin-auth's
 * parseAuthToken splits the token on `|` into exactly five fields; `://` contains none, so
 * the absolute URL survives parsing, and a path with a `|` in it never could.)
 */
function namesThisRequest(tokenPath: string, requestPath: string, policy: BitcoinAuthPolicy): boolean {
  if (policy.origin && tokenPath === policy.origin + requestPath) return true;
  if (policy.requireHostBinding) return false;
  // Under an issuer with a path the client requests (and signs) `/idp/api/...`, which the app
  // sees as `/api/...` (lib/path-prefix.ts): the public path names this request too.
  const prefix = policy.origin ? new URL(policy.origin).pathname.replace(/\/+$/, "") : "";
  return tokenPath === requestPath || (prefix !== "" && tokenPath === prefix + requestPath);
}

export async function verifyBitcoinAuthToken(
  token: string | null | undefined,
  target: BitcoinAuthTarget,
  opts: BitcoinAuthPolicy,
): Promise<BitcoinAuthResult> {
  if (!token) return fail("missing token");
  if (token.length > MAX_TOKEN_LENGTH) return fail("token too long");
  const parsed = parseAuthToken(token);
  if (!parsed) return fail("malformed token");
  const { pubkey, scheme, timestamp, requestPath, signature } = parsed;
  if (!COMPRESSED_PUBKEY.test(pubkey)) return fail("pubkey is not a compressed secp256k1 key");
  if (!uncompressedPoint(Buffer.from(pubkey, "hex"))) return fail("pubkey is not a valid point");
  if (!ISO_TIMESTAMP.test(timestamp)) return fail("timestamp is not an ISO 8601 UTC time");
  const signedAt = new Date(timestamp);
  if (Number.isNaN(signedAt.getTime())) return fail("timestamp is not a date");
  const now = opts.now ?? Date.now();
  const skew = opts.maxSkewMs ?? MAX_SKEW_MS;
  if (Math.abs(now - signedAt.getTime()) > skew) return fail("token is stale or from the future");
  if (!namesThisRequest(requestPath, target.requestPath, opts)) {
    return fail(opts.requireHostBinding && requestPath === target.requestPath ? "token is not bound to this host" : "token was made for another path or host");
  }

  const sigBytes = signatureBytes(signature);
  if (!sigBytes) return fail("signature is not canonical base64");
  // Before the costly check: a BRC-77 signature carries its signer, which must be the named key.
  if (scheme === "brc77") {
    const parts = brc77Parts(sigBytes);
    if (!parts || Utils.toHex(parts.signer) !== pubkey) return fail("signer is not the named key");
  }

  // The signed message, as bitcoin-auth builds it: path | timestamp | sha256hex(body) or "".
  const bodyHash = target.body ? sha256Hex(target.body) : "";
  // BRC-77 on node:crypto (lib/brc77.ts); BSM, and the rare case it leaves, on bitcoin-auth's own verifier.
  let valid = scheme === "brc77" ? verifyBrc77ForAnyone(`${requestPath}|${timestamp}|${bodyHash}`, sigBytes) : undefined;
  if (valid === undefined) {
    try {
      valid = verifyAuthToken(token, { requestPath, timestamp: new Date(now).toISOString(), body: target.body || undefined });
    } catch {
      valid = false;
    }
  }
  if (!valid) return fail("bad signature");
  if (!isCanonicalSignature(scheme, pubkey, sigBytes, `${requestPath}|${timestamp}|${bodyHash}`)) return fail("signature is not in canonical form");
  const key = sha256Hex([target.use ?? "", pubkey, scheme, requestPath, timestamp, bodyHash].join("|"));
  // Keep the replay record for as long as the token could still be fresh.
  if (!(await opts.replay.claim(key, signedAt.getTime() + skew - now + 1000))) {
    opts.onReplay?.();
    return fail("token was already used");
  }
  return { ok: true, pubkey, scheme, timestamp: signedAt };
}

/** Whether `value` is a compressed secp256k1 public key in hex that decodes to a point. */
export function isCompressedPubkey(value: unknown): value is string {
  return typeof value === "string" && COMPRESSED_PUBKEY.test(value) && uncompressedPoint(Buffer.from(value, "hex")) !== null;
}
