import { jsonResponse, PUBLIC, type Paths } from "../components.js";

/** routes/discovery/well-known.ts: discovery documents. */
export const wellKnownPaths: Paths = {
  "/.well-known/openid-configuration": {
    get: { tags: ["Discovery"], summary: "OpenID Connect discovery document (OIDC Discovery 1.0 §4)", security: PUBLIC, responses: { 200: jsonResponse("Provider metadata.") } },
  },
  "/.well-known/oauth-authorization-server": {
    get: { tags: ["Discovery"], summary: "OAuth 2.0 authorization server metadata (RFC 8414)", security: PUBLIC, responses: { 200: jsonResponse("Server metadata.") } },
  },
  "/.well-known/agent-configuration": {
    get: { tags: ["Discovery"], summary: "Agent auth discovery document", security: PUBLIC, responses: { 200: jsonResponse("Agent configuration.") } },
  },
  "/.well-known/oauth-protected-resource/mcp": {
    get: {
      tags: ["Discovery"],
      summary: "Protected resource metadata of our MCP server at /mcp (RFC 9728)",
      security: PUBLIC,
      responses: { 200: jsonResponse("Resource metadata: resource, authorization_servers, scopes_supported, bearer_methods_supported.") },
    },
  },
};
