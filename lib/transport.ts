/** Where better-auth's account surface and the OAuth endpoints are mounted ({base_url} of the spec). */
export const BASE_PATH = "/api/auth";
/** Name of the header our server fills with the peer address; better-auth's rate limiter keys on it. */
export const CLIENT_IP_HEADER = "x-idp-client-ip";
/** BRC-104: where a peer POSTs its mutual-authentication handshake messages (and GETs our metadata). */
export const MUTUAL_AUTH_PATH = "/.well-known/auth";
/** Our own MCP server (routes/mcp.ts); `${AUTH_URL}${MCP_PATH}` is its RFC 8707 resource identifier. */
export const MCP_PATH = "/mcp";
/**
 * agent-auth's routes that take an agent or host JWT optionally: a JWT that fails to verify is
 * ignored there and the caller served as anonymous (so a 200 there proves no JWT).
 */
export const AGENT_OPTIONAL_AUTH_PATHS: ReadonlySet<string> = new Set(["/capability/list", "/capability/describe"]);
