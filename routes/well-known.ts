import { Hono } from "hono";
import type { Auth } from "../auth.config.js";

/**
 * Discovery at the root of the issuer (RFC 8414 §3, OIDC Discovery §4): the issuer is
 * AUTH_URL itself, the endpoints live under /api/auth. Metadata is computed once per
 * process: it depends on configuration only.
 */
export function wellKnownRoutes(auth: Auth, issuer: string) {
  let openid: Promise<string> | undefined;
  let oauth: Promise<string> | undefined;
  let agents: Promise<string> | undefined;

  const finish = (metadata: Record<string, unknown>) => {
    const out: Record<string, unknown> = { ...metadata, issuer };
    // Advertise only what works: PKCE S256 is the only method we accept.
    out.code_challenge_methods_supported = ["S256"];
    out.authorization_response_iss_parameter_supported = true;
    // OIDC Discovery §3: the claims request parameter is not offered (plugins/claims-policy);
    // claims are released by scope only, as the consent page shows them.
    if ("claims_parameter_supported" in out) out.claims_parameter_supported = false;
    return JSON.stringify(out);
  };
  const serve = (body: string) =>
    new Response(body, {
      headers: { "content-type": "application/json", "cache-control": "public, max-age=300", "access-control-allow-origin": "*" },
    });

  return new Hono()
    .get("/openid-configuration", async () => {
      openid ??= auth.api.getOpenIdConfig().then((m) => finish(m as unknown as Record<string, unknown>));
      return serve(await openid);
    })
    .get("/oauth-authorization-server", async () => {
      oauth ??= auth.api.getOAuthServerConfig().then((m) => finish(m as unknown as Record<string, unknown>));
      return serve(await oauth);
    })
    // Agent Auth Protocol discovery (§6.1), at the root as the protocol expects; endpoints under /api/auth.
    .get("/agent-configuration", async () => {
      agents ??= auth.api.getAgentConfiguration().then((m) => JSON.stringify(m));
      return serve(await agents);
    });
}
