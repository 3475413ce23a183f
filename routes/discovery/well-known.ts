import { Hono, type Context } from "hono";
import type { Auth } from "../../auth.config.js";
import { ES256K } from "../../lib/es256k.js";
import { mcpResourceMetadata } from "../../lib/mcp-resource.js";
import { ACR_VALUES_SUPPORTED } from "../../plugins/ciba/index.js";
import type { RouteDeps, RouteEnv } from "../middleware.js";

/**
 * Discovery at the root of the issuer (RFC 8414 §3, OIDC Discovery §4): the issuer is
 * AUTH_URL itself, the endpoints live under /api/auth. Metadata is computed once per
 * mount (in `documents`): it depends on configuration only.
 */
export interface WellKnownDeps extends RouteDeps {
  issuer: string;
  /** Each document's JSON text once built, by path. */
  documents: Map<string, Promise<string>>;
}

type Ctx = Context<RouteEnv<WellKnownDeps>>;

function finish(metadata: Record<string, unknown>, issuer: string) {
  const out: Record<string, unknown> = { ...metadata, issuer };
  // Advertise only what works: PKCE S256 is the only method we accept.
  out.code_challenge_methods_supported = ["S256"];
  out.authorization_response_iss_parameter_supported = true;
  // OIDC Discovery §3: the claims request parameter is not offered (plugins/claims-policy);
  // claims are released by scope only, as the consent page shows them.
  if ("claims_parameter_supported" in out) out.claims_parameter_supported = false;
  // RFC 7523 §2.2 client assertions signed with ES256K (a Bitcoin key) verify too (lib/es256k.ts),
  // at every endpoint that authenticates a client with private_key_jwt.
  for (const key of ["token_endpoint_auth_signing_alg_values_supported", "introspection_endpoint_auth_signing_alg_values_supported", "revocation_endpoint_auth_signing_alg_values_supported"]) {
    if (Array.isArray(out[key]) && !out[key].includes(ES256K)) out[key] = [...out[key], ES256K];
  }
  // OIDC Discovery §3: the authentication context classes CIBA requests may ask for (plugins/ciba);
  // oauth-provider's own list names only "0".
  if ("acr_values_supported" in out) out.acr_values_supported = [...ACR_VALUES_SUPPORTED];
  // RFC 8414 §2 / OIDC Discovery §3: the developer documentation, our agent orientation document.
  out.service_documentation = `${issuer}/llms.txt`;
  return JSON.stringify(out);
}

/** The document at this path, built by `build` the first time; public, the same for everyone. */
async function serve(c: Ctx, build: (auth: Auth, issuer: string) => Promise<string>) {
  const { auth, issuer, documents } = c.var.deps;
  let body = documents.get(c.req.path);
  if (!body) documents.set(c.req.path, (body = build(auth, issuer)));
  return new Response(await body, {
    headers: { "content-type": "application/json", "cache-control": "public, max-age=300", "access-control-allow-origin": "*" },
  });
}

const openidConfiguration = (c: Ctx) => serve(c, (auth, issuer) => auth.api.getOpenIdConfig().then((m) => finish(m as unknown as Record<string, unknown>, issuer)));
const oauthServerMetadata = (c: Ctx) => serve(c, (auth, issuer) => auth.api.getOAuthServerConfig().then((m) => finish(m as unknown as Record<string, unknown>, issuer)));
// RFC 9728 §3.1: the metadata of our MCP server (routes/mcp/mcp.ts), path-inserted after its resource path.
const mcpProtectedResource = (c: Ctx) => serve(c, async (_auth, issuer) => JSON.stringify(mcpResourceMetadata(issuer)));
// Agent Auth Protocol discovery (§6.1), at the root as the protocol expects; endpoints under /api/auth.
const agentConfiguration = (c: Ctx) => serve(c, (auth) => auth.api.getAgentConfiguration().then((m) => JSON.stringify(m)));

/** Mounted at /.well-known. */
export const wellKnownRoutes = new Hono<RouteEnv<WellKnownDeps>>()
  .get("/openid-configuration", openidConfiguration)
  .get("/oauth-authorization-server", oauthServerMetadata)
  .get("/agent-configuration", agentConfiguration)
  .get("/oauth-protected-resource/mcp", mcpProtectedResource);
