import { APIError, createAuthMiddleware } from "better-auth/api";
import type { DpopNonces } from "../../lib/dpop-nonce.js";
import { DPOP_NONCE_HEADER, proofNonce } from "../../lib/dpop.js";
import { AUTH_PATHS } from "../../lib/auth-endpoints.js";
import { hookOn, type Hook } from "../hooks.js";

/**
 * RFC 9449 §8 at the token endpoint: a proof without a fresh server nonce is answered
 * `use_dpop_nonce` (400) with the nonce to use in `DPoP-Nonce`; every answer to a request that
 * carried a proof gives the current nonce, so a client keeps in step (§8.2).
 */
export function tokenEndpointNonces(nonces: DpopNonces): Hook[] {
  const before = hookOn(
    AUTH_PATHS.token,
    createAuthMiddleware(async (ctx) => {
      const proof = ctx.headers?.get("dpop");
      if (!proof) return;
      const claimed = proofNonce(proof);
      if (claimed && !nonces.accepts(claimed.nonce)) {
        throw new APIError(
          "BAD_REQUEST",
          { error: "use_dpop_nonce", error_description: "Authorization server requires nonce in DPoP proof" },
          { [DPOP_NONCE_HEADER]: nonces.current(), "Cache-Control": "no-store" },
        );
      }
    }),
  );
  const after = hookOn(
    AUTH_PATHS.token,
    createAuthMiddleware(async (ctx) => {
      if (ctx.headers?.get("dpop")) ctx.setHeader(DPOP_NONCE_HEADER, nonces.current());
    }),
  );
  return [before, after];
}
