/** Where better-auth's account surface and the OAuth endpoints are mounted ({base_url} of the spec). */
export const BASE_PATH = "/api/auth";
/** BRC-104: where a peer POSTs its mutual-authentication handshake messages (and GETs our metadata). */
export const MUTUAL_AUTH_PATH = "/.well-known/auth";
/** Our own MCP server (routes/mcp/mcp.ts); `${AUTH_URL}${MCP_PATH}` is its RFC 8707 resource identifier. */
export const MCP_PATH = "/mcp";
/**
 * The path every connection token names, whichever mount it is sent to: the wallet signs
 * `/api/wallet/connect` (as the Sigma client documents it), never the request it travels in.
 */
export const CONNECT_TOKEN_PATH = "/api/wallet/connect";
