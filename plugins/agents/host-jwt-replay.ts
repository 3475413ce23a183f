import { AGENT_AUTH_ERROR_CODES, agentError } from "@better-auth/agent-auth";
import { createAuthMiddleware } from "better-auth/api";
import { decodeJwt } from "jose";
import type { ReplayCache } from "../../lib/bitcoin-auth.js";
import { AGENT_OPTIONAL_AUTH_PATHS } from "../../lib/auth-endpoints.js";

/**
 * Host JWTs are single use. Agent Auth Protocol §4.6 and §8.4: every JWT MUST carry a `jti`
 * and the server MUST reject a `jti` it has seen. agent-auth's before-hook does so for agent
 * JWTs (and /agent/register, /agent/claim, /host/rotate-key check their own), but for a host
 * JWT on any other route it verifies signature, audience and age only: the same token worked
 * again and again for its whole minute, and one without `jti` was taken.
 *
 * This runs after agent-auth's hook, so `ctx.context.hostSession` is set only for a host JWT
 * it has verified; an unverified token never reaches the cache (nobody fills it with junk).
 * The record lives in the shared replay cache (Redis when configured), so a token used on one
 * instance is refused on every other.
 */

/** agent-auth's jwtMaxAge (60 s) plus its clock-skew tolerance (30 s): a token is never fresh for longer. */
const RECORD_MS = (60 + 30) * 1000;
const MAX_JTI_LENGTH = 256;

export function hostJwtReplayGuard(replay: ReplayCache) {
  return {
    matcher: (ctx: { context: object }) => Boolean((ctx.context as { hostSession?: unknown }).hostSession),
    handler: createAuthMiddleware(async (ctx) => {
      const context = ctx.context as { hostSession?: { host: { id: string } } };
      const hostId = context.hostSession?.host.id;
      if (!hostId) return;
      const bearer = /^Bearer\s+(\S+)$/i.exec(ctx.headers?.get("authorization") ?? "")?.[1] ?? "";
      let jti: unknown;
      try {
        jti = decodeJwt(bearer).jti;
      } catch {
        jti = undefined;
      }
      const challenge = { "WWW-Authenticate": `AgentAuth discovery="${new URL(ctx.context.baseURL).origin}/.well-known/agent-configuration"` };
      let refusal: ReturnType<typeof agentError> | null = null;
      if (typeof jti !== "string" || !jti || jti.length > MAX_JTI_LENGTH) refusal = agentError("UNAUTHORIZED", AGENT_AUTH_ERROR_CODES.INVALID_JWT, undefined, challenge);
      else if (!(await replay.claim(`agent-host-jwt:${hostId}:${jti}`, RECORD_MS))) refusal = agentError("UNAUTHORIZED", AGENT_AUTH_ERROR_CODES.JWT_REPLAY, undefined, challenge);
      if (!refusal) return;
      if (AGENT_OPTIONAL_AUTH_PATHS.has(ctx.path ?? "")) {
        context.hostSession = undefined; // served as anonymous, like any other bad JWT there
        return;
      }
      throw refusal;
    }),
  };
}
