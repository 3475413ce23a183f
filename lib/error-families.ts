import type { OAuthErrorCode } from "./errors.js";
import { BASE_PATH, MCP_PATH, MUTUAL_AUTH_PATH } from "./transport.js";

/**
 * Which error vocabulary each route speaks (the spec: RFC 9457 problem details outside OAuth
 * endpoints, RFC 6749 objects on them):
 * - `rfc6749`: the OAuth protocol endpoints below and our MCP resource (/mcp), `{error, error_description}`;
 * - `better-auth`: the rest of BASE_PATH, better-auth's `{code, message}` (plugins' `$ERROR_CODES`);
 * - `problem`: every other /api route and /.well-known/auth, `application/problem+json` (lib/problem-codes.ts);
 * - `html`: the pages, which word their errors themselves (routes/pages/error-words.ts).
 */
export type ErrorFamily = "rfc6749" | "better-auth" | "problem" | "html";

/**
 * An OAuth endpoint, with the RFC 6749 code for an answer better-auth's router gives before
 * the endpoint runs (malformed JSON, a wrong content type, its rate limiter) in its own
 * `{message, code}` shape: lib/respond.ts asOAuthError rewrites those with these codes.
 */
export interface OAuthRoute {
  /** 401: who failed to authenticate (RFC 6749 §5.2 the client; RFC 6750 §3.1 the token). */
  unauthorized: OAuthErrorCode;
  /** 429: RFC 8628 §3.5's "poll less often". */
  tooManyRequests: OAuthErrorCode;
  /** Any other 4xx. */
  otherwise: OAuthErrorCode;
}

const CLIENT_ENDPOINT: OAuthRoute = { unauthorized: "invalid_client", tooManyRequests: "slow_down", otherwise: "invalid_request" };

export const OAUTH_ROUTES: ReadonlyMap<string, OAuthRoute> = new Map(
  Object.entries<OAuthRoute>({
    "/oauth2/token": CLIENT_ENDPOINT,
    "/oauth2/introspect": CLIENT_ENDPOINT, // RFC 7662 §2.3
    "/oauth2/revoke": CLIENT_ENDPOINT, // RFC 7009 §2.2.1
    "/oauth2/register": { ...CLIENT_ENDPOINT, otherwise: "invalid_client_metadata" }, // RFC 7591 §3.2.2
    "/oauth2/userinfo": { ...CLIENT_ENDPOINT, unauthorized: "invalid_token" }, // OIDC Core §5.3.3, RFC 6750 §3.1
    "/device/code": CLIENT_ENDPOINT, // RFC 8628 §3.2
  }).map(([path, route]) => [BASE_PATH + path, route]),
);

/** RFC 7592 §2: the client configuration endpoint, `/oauth2/register/<client_id>`, authenticated by a bearer token. */
const CLIENT_CONFIGURATION_PREFIX = `${BASE_PATH}/oauth2/register/`;
const CLIENT_CONFIGURATION: OAuthRoute = { unauthorized: "invalid_token", tooManyRequests: "slow_down", otherwise: "invalid_client_metadata" };

/** The OAuth endpoint at this path, if it is one. */
export function oauthRouteOf(path: string): OAuthRoute | undefined {
  return OAUTH_ROUTES.get(path) ?? (path.startsWith(CLIENT_CONFIGURATION_PREFIX) ? CLIENT_CONFIGURATION : undefined);
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
