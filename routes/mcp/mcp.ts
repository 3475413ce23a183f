import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { Hono, type Context } from "hono";
import type { Kysely } from "kysely";
import { OAuthError } from "../../lib/errors.js";
import type { ResourceTokenVerifier } from "../../lib/resource-token.js";
import { oauthErrorResponse } from "../../lib/respond.js";
import { mcpResource, mcpResourceMetadataUrl } from "../../lib/mcp-resource.js";
import { findActiveExchange } from "../../plugins/oauth-store/exchanges.js";
import { accessTokenOf, DpopRefusal, jktOf, type DpopResourceGuard } from "../../lib/dpop.js";
import { mcpServer } from "./tools.js";
import type { RouteDeps, RouteEnv } from "../middleware.js";
import type { Database } from "../../lib/db/tables.js";

/**
 * Our own MCP server (streamable HTTP, stateless) at /mcp: a protected resource of this
 * authorization server (RFC 9728). Every request carries an access token issued for it
 * (RFC 8707 `resource` = `${AUTH_URL}/mcp`, an RFC 9068 JWT checked locally); without one
 * the answer is 401 with `WWW-Authenticate: Bearer resource_metadata=...`, which is how an
 * MCP client finds the metadata and from it this server (routes/discovery/well-known.ts).
 */
export interface McpDeps extends RouteDeps {
  db: Kysely<Database>;
  authUrl: string;
  tokens: ResourceTokenVerifier;
  /** RFC 9449: the proof check for DPoP-bound tokens. */
  dpop: DpopResourceGuard;
}

/**
 * 401 in RFC 6750 §3's words with RFC 9728 §5.1's `resource_metadata`: where the client learns
 * which authorization server to ask. Without any token the challenge names no error (§3.1).
 */
function unauthorized(authUrl: string, description: string, tokenSent: boolean) {
  const params = [`resource_metadata="${mcpResourceMetadataUrl(authUrl)}"`];
  if (tokenSent) params.unshift(`error="invalid_token"`, `error_description="${description}"`);
  return oauthErrorResponse(new OAuthError("invalid_token", description, { headers: { "www-authenticate": `Bearer ${params.join(", ")}` } }));
}

/** RFC 9449 §7.1: a DPoP refusal, 401 with its `DPoP` challenge (and the nonce to use, §9). */
function dpopUnauthorized(refusal: DpopRefusal) {
  return oauthErrorResponse(new OAuthError(refusal.error, refusal.description, { status: 401, headers: refusal.headers() }));
}

async function handle(c: Context<RouteEnv<McpDeps>>) {
  const { db, authUrl, tokens, dpop } = c.var.deps;
  const credential = accessTokenOf(c.req.raw.headers);
  if (!credential) return unauthorized(authUrl, "An access token for this resource is required.", false);
  const { token } = credential;
  const claims = await tokens.verify(token);
  if (!claims) return unauthorized(authUrl, "The access token is not one issued for this resource, or it has expired.", true);
  // A delegated token (RFC 8693 `act`) holds while its record does: revoking the grant it came from ends it.
  if (claims.act !== undefined && !(typeof claims.jti === "string" && (await findActiveExchange(db, claims.jti)))) {
    return unauthorized(authUrl, "The access token has been revoked.", true);
  }
  try {
    await dpop.check(c.req.raw, credential, jktOf(claims));
  } catch (err) {
    if (err instanceof DpopRefusal) return dpopUnauthorized(err);
    throw err;
  }
  const scopes = typeof claims.scope === "string" ? claims.scope.split(" ") : [];
  // RFC 9068 §2.2: a token of the client credentials grant names the client itself as `sub`.
  const machine = claims.sub === claims.client_id;
  const caller = { userId: machine ? null : claims.sub, bapId: !machine && typeof claims.bap_id === "string" ? claims.bap_id : null, scopes };
  const server = mcpServer(db, caller, { issuer: authUrl, resource: mcpResource(authUrl) });
  // Stateless: one server and transport per request, JSON answers (no SSE stream to keep open).
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  const res = await transport.handleRequest(c.req.raw, {
    authInfo: { token, clientId: claims.client_id ?? "", scopes, expiresAt: claims.exp, resource: new URL(mcpResource(authUrl)) },
  });
  res.headers.set("cache-control", "no-store");
  return res;
}

/** Mounted at /mcp. */
export const mcpRoutes = new Hono<RouteEnv<McpDeps>>().all("/", handle);
