import { AGENT_AUTH_ERROR_CODES, agentError } from "@better-auth/agent-auth";
import { createAuthMiddleware, getSessionFromCtx } from "better-auth/api";
import type { Logger } from "../../lib/logger.js";
import { OutboundRefused, type SafeFetch } from "../../lib/safe-fetch.js";

/**
 * agent-auth's `fetchJwks` (a patch-package hook, patches/@better-auth+agent-auth+0.6.2.patch):
 * every host or agent JWKS is fetched through the guarded fetcher, so a `jwks_url` that
 * resolves to loopback, a private range or a metadata address is never contacted. A refused
 * or failed fetch is "no keys": agent-auth then refuses the JWT (or uses a stored key).
 */
export function jwksFetcher(safeFetch: SafeFetch, logger?: Logger) {
  return async (url: string): Promise<Record<string, unknown>[] | null> => {
    try {
      const res = await safeFetch(url, { headers: { accept: "application/json" } });
      if (res.status !== 200) return null;
      const body = (await res.json()) as { keys?: unknown };
      return Array.isArray(body?.keys) ? body.keys.filter((k): k is Record<string, unknown> => typeof k === "object" && k !== null) : null;
    } catch (err) {
      logger?.warn("agent-auth: JWKS fetch refused or failed", { url, reason: err instanceof Error ? err.message : String(err) });
      return null;
    }
  };
}

const JWKS_URL_PATHS = new Set(["/host/create", "/host/update"]);

/**
 * A host's `jwks_url` is refused when it is set, not only when it is fetched: https, and a
 * host that resolves to public addresses only (the fetcher's own rule). Fetch time still
 * decides (a name can re-resolve later); this tells the person at once. It runs last, for a
 * signed-in owner only (./owner-guard.ts ran before it), so no anonymous request makes us
 * resolve a name.
 */
export function jwksUrlGuard(safeFetch: SafeFetch) {
  return {
    matcher: (ctx: { path?: string }) => Boolean(ctx.path && JWKS_URL_PATHS.has(ctx.path)),
    handler: createAuthMiddleware(async (ctx) => {
      const jwksUrl = (ctx.body as { jwks_url?: unknown } | undefined)?.jwks_url;
      if (typeof jwksUrl !== "string") return; // absent, or agent-auth's own 400
      if (!(await getSessionFromCtx(ctx))) return; // the endpoint answers 401
      const refuse = (why: string) => agentError("BAD_REQUEST", AGENT_AUTH_ERROR_CODES.INVALID_REQUEST, `jwks_url ${why}`);
      if (!jwksUrl.startsWith("https://")) throw refuse("must use https");
      try {
        await safeFetch.assertAllowed(jwksUrl);
      } catch (err) {
        if (err instanceof OutboundRefused) throw refuse("must point to a public address");
        throw err;
      }
    }),
  };
}
