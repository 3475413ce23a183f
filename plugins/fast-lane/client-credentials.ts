import { hash, timingSafeEqual } from "node:crypto";
import { basicCredentialsOf } from "../../lib/auth-request.js";
import type { LaneRequest, LaneRoute } from "../../lib/fast-lane.js";

/**
 * Client authentication as the fast lane's client endpoints (introspection, the refresh grant)
 * do it, for oauth-provider's `storeClientSecret: "hashed"` and `storeTokens: "hashed"`: the
 * SHA-256 base64url of a secret or token, RFC 6749 §2.3.1 Basic credentials of plain unreserved
 * characters only (so form-decoding them is the identity; anything else goes to the generic
 * path, which decodes it), and the constant-time comparison of a secret with its stored hash.
 */

const PLAIN = /^[A-Za-z0-9._~-]+$/;

/**
 * What oauth-provider stores of a secret or token: its SHA-256, base64url without padding
 * (node:crypto's one-shot `hash`: no Hash object per call, about a third of createHash's cost).
 */
export const sha256 = (value: string) => hash("sha256", value, "base64url");

/** An answer's headers: JSON, never stored (RFC 6749 §5.1, RFC 7662 §2.2). */
export const NO_STORE = { "content-type": "application/json", "cache-control": "no-store", pragma: "no-cache" };

/** Basic credentials of unreserved characters only, else null (the generic path decodes the rest). */
export function plainBasic(header: string | null | undefined): { id: string; secret: string } | null {
  const basic = basicCredentialsOf(header);
  if (!basic || basic.rawSecret === undefined) return null;
  const { rawId: id, rawSecret: secret } = basic;
  return PLAIN.test(id) && PLAIN.test(secret) ? { id, secret } : null;
}

/** Whether `given` is the secret whose hash is `stored`, compared in constant time. */
export function secretMatches(stored: string | null, given: string): boolean {
  if (!stored) return false;
  const a = Buffer.from(sha256(given));
  const b = Buffer.from(stored);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The client a request's plain Basic credentials name (the `client` limit's key), or null. */
export function plainBasicClientId(authorization: string | null | undefined): string | null {
  return plainBasic(authorization)?.id ?? null;
}

/** lib/auth-limits.ts's budget for a client named by its credentials (at most 512 characters). */
export function clientBudget(req: LaneRequest): { limit: "client"; key: string } | null {
  const id = plainBasicClientId(req.headers.authorization);
  return id && id.length <= 512 ? { limit: "client", key: `client:${id}` } : null;
}

/** A client endpoint of the fast lane at `path` (its own metrics label), counted against the client's budget. */
export function clientLaneRoute(path: string, answer: LaneRoute["answer"]): LaneRoute {
  return { method: "POST", path, label: path, credential: clientBudget, answer };
}
