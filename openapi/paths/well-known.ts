import { record } from "../schemas.js";
import { jsonResponse, PUBLIC, type Paths } from "../components.js";

/** routes/discovery/well-known.ts: discovery documents. */
const uri = { type: "string", format: "uri" };
const strings = { type: "array", items: { type: "string" } };
/** RFC 8414 §2 / OIDC Discovery §3: the members every client reads; the rest are listed loosely. */
const SERVER_METADATA = {
  type: "object",
  description: "Authorization server metadata; further members (RFC 8414 §2, OIDC Discovery §3, RFC 9449, RFC 8628) as advertised.",
  properties: {
    issuer: uri,
    authorization_endpoint: uri,
    token_endpoint: uri,
    userinfo_endpoint: uri,
    jwks_uri: uri,
    registration_endpoint: uri,
    introspection_endpoint: uri,
    revocation_endpoint: uri,
    end_session_endpoint: uri,
    device_authorization_endpoint: uri,
    scopes_supported: strings,
    response_types_supported: strings,
    grant_types_supported: strings,
    code_challenge_methods_supported: strings,
    token_endpoint_auth_methods_supported: strings,
    subject_types_supported: strings,
    id_token_signing_alg_values_supported: strings,
    dpop_signing_alg_values_supported: strings,
    service_documentation: uri,
  },
  required: ["issuer", "authorization_endpoint", "token_endpoint", "jwks_uri", "response_types_supported"],
};
export const wellKnownPaths: Paths = {
  "/.well-known/openid-configuration": {
    get: { tags: ["Discovery"], summary: "OpenID Connect discovery document (OIDC Discovery 1.0 §4)", security: PUBLIC, responses: { 200: jsonResponse("Provider metadata.", { ...SERVER_METADATA, required: [...SERVER_METADATA.required, "subject_types_supported", "id_token_signing_alg_values_supported"] }) } },
  },
  "/.well-known/oauth-authorization-server": {
    get: { tags: ["Discovery"], summary: "OAuth 2.0 authorization server metadata (RFC 8414)", security: PUBLIC, responses: { 200: jsonResponse("Server metadata.", SERVER_METADATA) } },
  },
  "/.well-known/agent-configuration": {
    get: { tags: ["Discovery"], summary: "Agent auth discovery document", security: PUBLIC, responses: {
        200: jsonResponse("Agent configuration.", record("Agent Auth discovery (draft).", { version: { type: "string" }, provider_name: { type: "string" }, description: { type: "string" }, issuer: uri, default_location: uri, algorithms: strings, modes: strings, approval_methods: strings, endpoints: { type: "object", additionalProperties: uri } }, ["description", "default_location", "algorithms", "modes", "approval_methods"])),
      },
    },
  },
  "/.well-known/oauth-protected-resource/mcp": {
    get: {
      tags: ["Discovery"],
      summary: "Protected resource metadata of our MCP server at /mcp (RFC 9728)",
      security: PUBLIC,
      responses: { 200: jsonResponse("Resource metadata.", record("RFC 9728 §2 protected resource metadata.", { resource: uri, authorization_servers: { type: "array", items: uri }, scopes_supported: strings, bearer_methods_supported: strings }, ["scopes_supported", "bearer_methods_supported"])) },
    },
  },
};
