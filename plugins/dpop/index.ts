import type { oauthProvider } from "@better-auth/oauth-provider";
import type { BetterAuthPlugin } from "better-auth";
import type { ReplayCache } from "../../lib/bitcoin-auth.js";
import { DPOP_ALGORITHMS, dpopReplayStore, enableEs256kProofs } from "../../lib/dpop.js";
import type { DpopNonces } from "../../lib/dpop-nonce.js";
import { tokenEndpointNonces } from "./nonce.js";
import { userinfoDpop } from "./userinfo.js";

type DpopOptions = NonNullable<Parameters<typeof oauthProvider>[0]["dpop"]>;

/** oauth-provider's `dpop` options: our algorithms (ES256K is beyond its type, hence the cast) and replay records. */
export function dpopOptions(replay: ReplayCache): DpopOptions {
  return { signingAlgorithms: [...DPOP_ALGORITHMS] as unknown as DpopOptions["signingAlgorithms"], replayStore: dpopReplayStore(replay) };
}

/**
 * DPoP on top of oauth-provider's own support (proof checks, `cnf.jkt` binding): registers the
 * ES256K verifier (lib/es256k.ts) with the proof check, asks for server nonces at the token
 * endpoint when `nonces` is given (./nonce.ts), and gives userinfo's DPoP refusals their
 * challenge and nonce (./userinfo.ts).
 */
export function dpop(options: { nonces: DpopNonces | null }) {
  const [tokenBefore, tokenAfter] = options.nonces ? tokenEndpointNonces(options.nonces) : [];
  const [userinfoBefore, userinfoAfter] = userinfoDpop(options.nonces);
  return {
    id: "dpop",
    init() {
      enableEs256kProofs();
    },
    hooks: {
      before: [...(tokenBefore ? [tokenBefore] : []), userinfoBefore!],
      after: [...(tokenAfter ? [tokenAfter] : []), userinfoAfter!],
    },
  } satisfies BetterAuthPlugin;
}
