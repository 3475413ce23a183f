import type { BetterAuthPlugin } from "better-auth";
import { createAuthMiddleware } from "better-auth/api";

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

function isHttpLoopback(uri: unknown): boolean {
  if (typeof uri !== "string") return false;
  try {
    const url = new URL(uri);
    return url.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname);
  } catch {
    return false;
  }
}

/**
 * Dynamic registration policy beyond what oauth-provider enforces (https redirect URIs,
 * no fragments, exact matching). While developing (NODE_ENV other than production), a
 * web app whose redirect URIs are all http on a loopback host is registered as a native
 * client (RFC 8252 §7.3), the only client type for which the provider accepts them.
 */
export function registrationPolicy(options: { development: boolean }) {
  return {
    id: "registration-policy",
    hooks: {
      before: [
        {
          matcher: (ctx) => options.development && ctx.path === "/oauth2/register",
          handler: createAuthMiddleware(async (ctx) => {
            const body = ctx.body as Record<string, unknown> | undefined;
            if (!body || (body.application_type !== undefined && body.application_type !== "web")) return;
            const uris = body.redirect_uris;
            if (!Array.isArray(uris) || !uris.length || !uris.every(isHttpLoopback)) return;
            return { context: { body: { ...body, application_type: "native" } } };
          }),
        },
      ],
    },
  } satisfies BetterAuthPlugin;
}
