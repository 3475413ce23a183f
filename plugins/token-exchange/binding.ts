import type { OAuthExtensionGrantHandler } from "@better-auth/oauth-provider";
import { APIError } from "better-auth/api";
import { createDpopReplayStore, isDpopProofError, verifyDpopProof } from "better-auth/oauth2";
import { AUTH_PATHS } from "../../lib/auth-endpoints.js";

type GrantInput = Parameters<OAuthExtensionGrantHandler>[0];

function invalidProof(description: string): never {
  throw new APIError("BAD_REQUEST", { error: "invalid_dpop_proof", error_description: description });
}

/**
 * RFC 9449 §5 for the exchange, which signs its token itself: a request with a DPoP proof gets a
 * token bound to the proof key (§6.1 `cnf.jkt`). The proof is checked as oauth-provider checks it
 * for its own grants (§4.3: `typ`, the algorithms and replay store of its `dpop` options, `htm`
 * POST, `htu` this token endpoint, `iat` window, `jti` used once); the server nonce (§8) was
 * already asked for by plugins/dpop's hook on the token endpoint, before any grant runs. A client
 * registered with `dpop_bound_access_tokens` (§5.2) must send a proof. Undefined without a proof.
 */
export async function proofBinding({ ctx, opts }: Pick<GrantInput, "ctx" | "opts">, client: { dpopBoundAccessTokens?: boolean | null }): Promise<{ jkt: string } | undefined> {
  const proofJwt = ctx.headers?.get("dpop") ?? undefined;
  if (!proofJwt) {
    if (client.dpopBoundAccessTokens === true) invalidProof("DPoP proof header is required");
    return undefined;
  }
  try {
    const { jkt } = await verifyDpopProof({
      proofJwt,
      method: "POST",
      // The URL oauth-provider checks `htu` against for its own grants (the public one).
      url: ctx.request?.url ?? `${ctx.context.baseURL}${AUTH_PATHS.token}`,
      proofMaxAgeSeconds: opts.dpop?.proofMaxAgeSeconds,
      signingAlgorithms: opts.dpop?.signingAlgorithms,
      // As oauth-provider: its own store when the options give none, so a `jti` is never unchecked.
      replayStore: opts.dpop?.replayStore ?? createDpopReplayStore(ctx.context.internalAdapter),
    });
    return { jkt };
  } catch (err) {
    if (isDpopProofError(err)) invalidProof(err.message);
    throw err;
  }
}
