import { decodeJwt } from "jose";

/**
 * The nonce a client-submitted ID token is bound to, read without verification: only to decide
 * whether the request must prove it. better-auth compares `idToken.nonce` with the token's claim
 * (exactly, or as its SHA-256 for Apple) but skips the check when the body carries no nonce, so a
 * nonce-bound token lifted from elsewhere would pass. Signature, iss, aud and exp are verified by
 * better-auth against the provider's JWKS before the token is used; nothing here authorizes.
 */
export function idTokenNonceClaim(token: string): string | null {
  try {
    const nonce = decodeJwt(token).nonce;
    return typeof nonce === "string" && nonce ? nonce : null;
  } catch {
    return null; // Not a JWT: better-auth's verification refuses it.
  }
}
