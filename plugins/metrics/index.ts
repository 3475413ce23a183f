import type { BetterAuthPlugin } from "better-auth";
import { createAuthMiddleware, isAPIError } from "better-auth/api";
import { GRANT_TYPES, type Metrics } from "../../lib/metrics.js";
import type { Hook } from "../hooks.js";
import { AUTH_PATHS } from "../../lib/auth-endpoints.js";
import type { AnalyticsCounter } from "../analytics/counter.js";
import { countTokenAnswer } from "../analytics/token.js";

export interface MetricsPluginOptions {
  metrics: Metrics;
  /** Key sign-in's endpoint, `/sign-in/<SIGMA_SERVICE_NAME>`. */
  keySignInPath: string;
  /** Per-client analytics (plugins/analytics): the same hook counts each token answer for its client too. */
  analytics?: AnalyticsCounter;
}

/**
 * Counts what only better-auth's endpoints know: tokens issued by grant type, and sign-ins by
 * method and result. Listed first among the plugins, so its after hooks see each endpoint's own
 * answer before another plugin's hook reshapes it (two-factor takes a fresh session back while the
 * second factor is pending: the password was still right, a success of the password method).
 */
export function metrics({ metrics, keySignInPath, analytics }: MetricsPluginOptions) {
  const grants = new Set<string>(GRANT_TYPES);
  const tokens: Hook = {
    matcher: (ctx) => ctx.path === AUTH_PATHS.token,
    handler: createAuthMiddleware(async (ctx) => {
      const returned = ctx.context.returned;
      const body = (ctx.body ?? {}) as Record<string, unknown>;
      const grant = body.grant_type;
      // Only grants this server answers successfully get a label of their own (bounded labels).
      const label = typeof grant === "string" && grants.has(grant) ? grant : "other";
      // A Map update, no query: the token endpoint's cost does not change (plugins/analytics/counter.ts).
      if (analytics) countTokenAnswer(analytics, body, ctx.headers?.get("authorization"), returned, label);
      if (isAPIError(returned) || (returned instanceof Response && !returned.ok)) return;
      metrics.tokensIssued.inc({ grant_type: label });
    }),
  };
  // better-auth's callback paths (built-in social providers, generic OIDC) and passkey sign-in.
  const methods = new Map<string, string>([
    ["/sign-in/email", "password"],
    [keySignInPath, "key"],
    ["/callback/:id", "social"],
    ["/oauth2/callback/:providerId", "social"],
    ["/passkey/verify-authentication", "passkey"],
  ]);
  const signIns: Hook = {
    matcher: (ctx) => methods.has(ctx.path ?? ""),
    handler: createAuthMiddleware(async (ctx) => {
      // A sign-in succeeded when it made a session (the social callback redirects either way).
      const result = ctx.context.newSession ? "success" : "failure";
      metrics.signIns.inc({ method: methods.get(ctx.path)!, result });
    }),
  };
  return { id: "metrics", hooks: { after: [tokens, signIns] } } satisfies BetterAuthPlugin;
}
