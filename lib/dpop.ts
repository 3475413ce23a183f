import { registerJwsVerifier, verifyDpopProof, isDpopProofError, type DpopReplayStore } from "better-auth/oauth2";
import { decodeJwt } from "jose";
import type { ReplayCache } from "./bitcoin-auth.js";
import type { DpopNonces } from "./dpop-nonce.js";
import { ES256K, verifyEs256kJws } from "./es256k.js";

/**
 * RFC 9449 DPoP proof algorithms we accept, and advertise as `dpop_signing_alg_values_supported`
 * (RFC 9449 §5.1): ES256 and EdDSA as jose verifies them, and ES256K (RFC 8812 §3.2) so that a
 * Bitcoin key (a BAP member key, an agent host key) can be the proof key. Exactly these: a
 * client choosing from the list must not meet an algorithm we then refuse.
 */
export const DPOP_ALGORITHMS = ["ES256", "EdDSA", ES256K] as const;

export const DPOP_NONCE_HEADER = "DPoP-Nonce";

/** Lets the proof check (@better-auth/core, patched: core-jws-verifiers) verify ES256K with lib/es256k.ts. */
export function enableEs256kProofs(): void {
  registerJwsVerifier(ES256K, verifyEs256kJws);
}

/**
 * Used proofs in the shared replay records (collaborators.ts: Redis when configured, so a proof
 * used at one instance is refused at every other), kept while the proof could still be fresh.
 */
export function dpopReplayStore(cache: ReplayCache): DpopReplayStore {
  return { reserve: ({ key, expiresAt, now }) => cache.claim(key, Math.max(1000, expiresAt.getTime() - now.getTime())) };
}

/**
 * The `nonce` a proof claims, read before its signature is checked: it can only refuse (ask for
 * a fresh nonce), never accept; the full check of the same proof, nonce included, follows.
 * Undefined for a proof that does not decode (the full check refuses it).
 */
export function proofNonce(proof: string): { nonce: unknown } | undefined {
  try {
    return { nonce: decodeJwt(proof).nonce };
  } catch {
    return undefined;
  }
}

/** An access token as presented (RFC 6750 §2.1 `Bearer`, RFC 9449 §7.1 `DPoP`). */
export interface AccessTokenCredential {
  scheme: "Bearer" | "DPoP";
  token: string;
}

const CREDENTIAL = /^(Bearer|DPoP) +([A-Za-z0-9\-._~+/]+=*) *$/i;

/** The access token of an Authorization header, with its scheme; null without one. */
export function accessTokenOf(headers: Headers): AccessTokenCredential | null {
  const match = CREDENTIAL.exec(headers.get("authorization") ?? "");
  if (!match) return null;
  return { scheme: match[1]!.toLowerCase() === "dpop" ? "DPoP" : "Bearer", token: match[2]! };
}

/** A resource's refusal of a request under RFC 9449 §7.1 / §9: 401 with a `DPoP` challenge. */
export class DpopRefusal extends Error {
  override name = "DpopRefusal";
  constructor(
    readonly error: "invalid_token" | "invalid_dpop_proof" | "use_dpop_nonce",
    readonly description: string,
    readonly nonce?: string,
  ) {
    super(description);
  }
  /** `WWW-Authenticate: DPoP error=..., algs=...` (RFC 9449 §7.1), and the nonce to use (§9). */
  headers(): Record<string, string> {
    const challenge = `DPoP error="${this.error}", error_description="${this.description}", algs="${DPOP_ALGORITHMS.join(" ")}"`;
    return { "www-authenticate": challenge, ...(this.nonce ? { [DPOP_NONCE_HEADER.toLowerCase()]: this.nonce } : {}) };
  }
}

export interface DpopResourceGuard {
  /**
   * RFC 9449 §7.1 for a token already verified as active: a token bound to a key (`jkt`) needs
   * the DPoP scheme and a proof by that key for this request, over this token (`ath`), fresh,
   * used once and, with server nonces, carrying one; the DPoP scheme needs a bound token. Throws
   * {@link DpopRefusal}.
   */
  check(req: Request, credential: AccessTokenCredential, jkt: string | null): Promise<void>;
}

/** `cnf.jkt` of a token's claims (RFC 7800, RFC 9449 §6), or null. */
export function jktOf(claims: object): string | null {
  const jkt = ((claims as { cnf?: unknown }).cnf as { jkt?: unknown } | undefined)?.jkt;
  return typeof jkt === "string" && jkt ? jkt : null;
}

export function dpopResourceGuard(opts: { authUrl: string; replay: ReplayCache; nonces: DpopNonces | null }): DpopResourceGuard {
  enableEs256kProofs();
  const replayStore = dpopReplayStore(opts.replay);
  return {
    async check(req, credential, jkt) {
      if (!jkt) {
        if (credential.scheme === "DPoP") throw new DpopRefusal("invalid_token", "The DPoP scheme needs a DPoP-bound access token.");
        return;
      }
      if (credential.scheme !== "DPoP") throw new DpopRefusal("invalid_token", "This access token is DPoP-bound: send it with the DPoP scheme and a proof.");
      const proofs = req.headers.get("dpop");
      // RFC 9449 §4.3 step 1: exactly one DPoP header (a repeated one arrives comma-joined).
      if (!proofs || proofs.includes(",")) throw new DpopRefusal("invalid_dpop_proof", "Send one DPoP proof for this request.");
      const claimed = proofNonce(proofs);
      if (opts.nonces && claimed && !opts.nonces.accepts(claimed.nonce)) {
        throw new DpopRefusal("use_dpop_nonce", "Resource server requires nonce in DPoP proof", opts.nonces.current());
      }
      // §4.3 step 9: `htu` is the public URL (AUTH_URL's, with its path prefix) of this request.
      const url = `${opts.authUrl}${new URL(req.url).pathname}`;
      try {
        await verifyDpopProof({ proofJwt: proofs, method: req.method, url, accessToken: credential.token, expectedJkt: jkt, requireAth: true, signingAlgorithms: DPOP_ALGORITHMS, replayStore });
      } catch (err) {
        if (isDpopProofError(err)) throw new DpopRefusal("invalid_dpop_proof", err.message);
        throw err;
      }
    },
  };
}
