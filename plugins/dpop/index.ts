import type { oauthProvider } from "@better-auth/oauth-provider";
import type { BetterAuthPlugin } from "better-auth";
import { registerJwsVerifier, type DpopReplayStore } from "better-auth/oauth2";
import type { ReplayCache } from "../../lib/bitcoin-auth.js";
import type { DpopNonces } from "../../lib/dpop-nonce.js";
import { ES256K, verifyEs256kJws } from "../../lib/es256k.js";
import { tokenEndpointNonces } from "./nonce.js";

/**
 * RFC 9449 DPoP proof algorithms we accept, and advertise as `dpop_signing_alg_values_supported`
 * (RFC 9449 §5.1): ES256 and EdDSA as jose verifies them, and ES256K (RFC 8812 §3.2) so that a
 * Bitcoin key (a BAP member key, an agent host key) can be the proof key. Exactly these: a
 * client choosing from the list must not meet an algorithm we then refuse.
 */
export const DPOP_ALGORITHMS = ["ES256", "EdDSA", ES256K] as const;

type DpopOptions = NonNullable<Parameters<typeof oauthProvider>[0]["dpop"]>;

/**
 * Used proofs in the shared replay records (collaborators.ts: Redis when configured, so a proof
 * used at one instance is refused at every other), kept while the proof could still be fresh.
 */
export function dpopReplayStore(cache: ReplayCache): DpopReplayStore {
  return { reserve: ({ key, expiresAt, now }) => cache.claim(key, Math.max(1000, expiresAt.getTime() - now.getTime())) };
}

/** oauth-provider's `dpop` options: our algorithms (ES256K is beyond its type, hence the cast) and replay records. */
export function dpopOptions(replay: ReplayCache): DpopOptions {
  return { signingAlgorithms: [...DPOP_ALGORITHMS] as unknown as DpopOptions["signingAlgorithms"], replayStore: dpopReplayStore(replay) };
}

/**
 * DPoP on top of oauth-provider's own support (proof checks, `cnf.jkt` binding): registers the
 * ES256K verifier (lib/es256k.ts) with the proof check, and asks for server nonces at the token
 * endpoint when `nonces` is given (./nonce.ts).
 */
export function dpop(options: { nonces: DpopNonces | null }) {
  const [before, after] = options.nonces ? tokenEndpointNonces(options.nonces) : [];
  return {
    id: "dpop",
    init() {
      registerJwsVerifier(ES256K, verifyEs256kJws);
    },
    hooks: { before: before ? [before] : [], after: after ? [after] : [] },
  } satisfies BetterAuthPlugin;
}
