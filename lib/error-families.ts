import { AUTH_ENDPOINTS, authEndpointOf, type OAuthRoute } from "./auth-endpoints.js";
import type { OAuthErrorCode } from "./errors.js";
import { BASE_PATH, MCP_PATH, MUTUAL_AUTH_PATH } from "./mount-paths.js";

/**
 * Which error vocabulary each route speaks (the spec: RFC 9457 problem details outside OAuth
 * endpoints, RFC 6749 objects on them):
 * - `rfc6749`: the OAuth protocol endpoints below and our MCP resource (/mcp), `{error, error_description}`;
 * - `better-auth`: the rest of BASE_PATH, better-auth's `{code, message}` (plugins' `$ERROR_CODES`);
 * - `problem`: every other /api route and /.well-known/auth, `application/problem+json` (lib/problem-codes.ts);
 * - `html`: the pages, which word their errors themselves (routes/pages/error-words.ts).
 */
export type ErrorFamily = "rfc6749" | "better-auth" | "problem" | "html";

export type { OAuthRoute };

/** The OAuth endpoints by public path (the rows of lib/auth-endpoints.ts that have RFC 6749 codes). */
export const OAUTH_ROUTES: ReadonlyMap<string, OAuthRoute> = new Map(
  [...AUTH_ENDPOINTS].flatMap(([path, endpoint]) => (endpoint.oauth ? [[BASE_PATH + path, endpoint.oauth] as const] : [])),
);

/** The OAuth endpoint at this path, if it is one. */
export function oauthRouteOf(path: string): OAuthRoute | undefined {
  return path.startsWith(`${BASE_PATH}/`) ? authEndpointOf(path.slice(BASE_PATH.length)).oauth : undefined;
}

/** The error family of a request path. */
export function errorFamilyOf(path: string): ErrorFamily {
  if (oauthRouteOf(path)) return "rfc6749";
  if (path === BASE_PATH || path.startsWith(`${BASE_PATH}/`)) return "better-auth";
  if (path === "/api" || path.startsWith("/api/")) return "problem";
  // BRC-104's handshake endpoint is an API too (lib/mutual-auth.ts).
  if (path === MUTUAL_AUTH_PATH) return "problem";
  // Our MCP server is an RFC 6750 protected resource: `invalid_token` and friends (routes/mcp/mcp.ts).
  if (path === MCP_PATH) return "rfc6749";
  return "html";
}

/** The RFC 6749 code for a better-auth `{message, code}` error of this status on an OAuth endpoint. */
export function oauthCodeFor(route: OAuthRoute, status: number): OAuthErrorCode {
  if (status === 401) return route.unauthorized;
  if (status === 429) return route.tooManyRequests;
  return route.otherwise;
}
