import { DPOP_ALGORITHMS } from "./dpop.js";
import { MCP_PATH } from "./mount-paths.js";

/**
 * Our MCP server as an OAuth protected resource (RFC 9728): its identifier and metadata, which
 * the MCP route (routes/mcp/mcp.ts), discovery (routes/discovery/well-known.ts) and the token
 * verifier (app.ts) all name.
 */

/** The scopes an MCP client is told to ask for (RFC 9728 `scopes_supported`): its tools' (routes/mcp/tools.ts), sign-in and refresh. */
export const MCP_SCOPES = ["openid", "profile", "backup:read", "offline_access"] as const;

export const mcpResource = (authUrl: string) => `${authUrl}${MCP_PATH}`;
/** RFC 9728 §3.1: the well-known name inserted between the host and the resource's path (`/.well-known/oauth-protected-resource/idp/mcp` under a path issuer). */
export const mcpResourceMetadataUrl = (authUrl: string) => {
  const resource = new URL(mcpResource(authUrl));
  return `${resource.origin}/.well-known/oauth-protected-resource${resource.pathname}`;
};

/** RFC 9728 §2: this resource's metadata document. */
export function mcpResourceMetadata(authUrl: string) {
  return {
    resource: mcpResource(authUrl),
    authorization_servers: [authUrl],
    scopes_supported: [...MCP_SCOPES],
    bearer_methods_supported: ["header"],
    // RFC 9728 §2: DPoP-bound tokens are taken with proofs of these algorithms (lib/dpop.ts).
    dpop_signing_alg_values_supported: [...DPOP_ALGORITHMS],
    resource_name: "Identity MCP server",
    resource_documentation: `${authUrl}/llms.txt`,
  };
}
