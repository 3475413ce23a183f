import { APIError, createAuthMiddleware } from "better-auth/api";
import { accessTokenOf, DpopRefusal, proofNonce } from "../../lib/dpop.js";
import type { DpopNonces } from "../../lib/dpop-nonce.js";
import { AUTH_PATHS } from "../../lib/auth-endpoints.js";
import { hookOn, type Hook } from "../hooks.js";

/** oauth-provider's userinfo refusals that concern DPoP (its own test: the code, or "DPoP" in the words). */
function dpopRefusalOf(returned: unknown): DpopRefusal | null {
  if (!(returned instanceof APIError)) return null;
  const body = returned.body as { error?: unknown; error_description?: unknown } | undefined;
  const description = typeof body?.error_description === "string" ? body.error_description : "";
  if (body?.error === "invalid_dpop_proof") return new DpopRefusal("invalid_dpop_proof", description);
  if (body?.error === "invalid_token" && description.includes("DPoP")) return new DpopRefusal("invalid_token", description);
  return null;
}

/**
 * RFC 9449 §7.1 and §9 at userinfo, where oauth-provider checks the binding itself: its DPoP
 * refusals get the `DPoP` challenge (`WWW-Authenticate`), and with server nonces a proof must
 * carry a fresh one (401 `use_dpop_nonce` with `DPoP-Nonce`), as at our other resources.
 */
export function userinfoDpop(nonces: DpopNonces | null): Hook[] {
  const before = hookOn(
    AUTH_PATHS.userinfo,
    createAuthMiddleware(async (ctx) => {
      const proof = ctx.headers?.get("dpop");
      if (!nonces || !proof || accessTokenOf(ctx.headers!)?.scheme !== "DPoP") return;
      const claimed = proofNonce(proof);
      if (claimed && !nonces.accepts(claimed.nonce)) {
        const refusal = new DpopRefusal("use_dpop_nonce", "Resource server requires nonce in DPoP proof", nonces.current());
        throw new APIError("UNAUTHORIZED", { error: "use_dpop_nonce", error_description: refusal.description }, refusal.headers());
      }
    }),
  );
  const after = hookOn(
    AUTH_PATHS.userinfo,
    createAuthMiddleware(async (ctx) => {
      const refusal = dpopRefusalOf(ctx.context.returned);
      if (refusal) for (const [name, value] of Object.entries(refusal.headers())) ctx.setHeader(name, value);
    }),
  );
  return [before, after];
}
