import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * RFC 9449 §8 server nonces without state: a nonce is its time window and an HMAC of that window
 * under the server secret, so every instance issues and accepts the same nonces with nothing
 * shared but the secret. A nonce of the current or the previous window is accepted, so one lives
 * between `lifetimeSeconds` and twice that; an older one, or one this server did not make, is
 * stale and the client is asked to use the fresh one (`use_dpop_nonce`).
 */
export interface DpopNonces {
  /** The nonce to send now (`DPoP-Nonce`). */
  current(): string;
  /** Whether `nonce` is one of ours and fresh; constant time in its MAC. */
  accepts(nonce: unknown): boolean;
}

const MAC_CHARS = 32; // 24 bytes of HMAC-SHA-256, base64url

export function dpopNonces(secret: string, lifetimeSeconds: number, now: () => number = Date.now): DpopNonces {
  const windowAt = () => Math.floor(now() / 1000 / lifetimeSeconds);
  const mac = (window: number) => createHmac("sha256", secret).update(`dpop-nonce:${window}`).digest("base64url").slice(0, MAC_CHARS);
  const nonceOf = (window: number) => `${window.toString(36)}.${mac(window)}`;
  return {
    current: () => nonceOf(windowAt()),
    accepts(nonce) {
      if (typeof nonce !== "string" || nonce.length > 64) return false;
      const match = /^([0-9a-z]{1,12})\.([A-Za-z0-9_-]+)$/.exec(nonce);
      if (!match) return false;
      const window = parseInt(match[1]!, 36);
      const current = windowAt();
      if (window !== current && window !== current - 1) return false;
      const given = Buffer.from(match[2]!);
      const expected = Buffer.from(mac(window));
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
  };
}
