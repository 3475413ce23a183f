import type { OAuthErrorCode } from "./errors.js";
import type { LimitName } from "./limits.js";

/**
 * The one table of better-auth's endpoints as the edge knows them (paths under BASE_PATH):
 * which limit of lib/limits.ts each falls under, which speak RFC 6749 and with which codes,
 * and the few facts the limiter needs. The limiter (lib/auth-limits.ts), the error format
 * (lib/error-families.ts), the request record (lib/auth-request.ts) and the plugins' matchers
 * read paths from here; nothing else spells them.
 */
export const AUTH_PATHS = {
  token: "/oauth2/token",
  par: "/oauth2/par",
  introspect: "/oauth2/introspect",
  revoke: "/oauth2/revoke",
  register: "/oauth2/register",
  userinfo: "/oauth2/userinfo",
  deviceCode: "/device/code",
  backchannelAuthentication: "/oauth2/bc-authorize",
  getSession: "/get-session",
} as const;

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

export interface AuthEndpoint {
  /** The row of lib/limits.ts it is counted under (`session` stands for "session, else anonymous"). */
  limit: LimitName;
  /** Its RFC 6749 codes, when it is an OAuth endpoint. */
  oauth?: OAuthRoute;
  /**
   * It serves a client without authenticating it when the client sends no secret (RFC 7009 §2.1
   * revocation by a public client, RFC 8628 §3.1 device authorization): a bare client_id there is
   * no credential. The token endpoint is not one: its 2xx needs a grant issued to the client.
   */
  clientIdSuffices?: boolean;
  /** agent-auth takes an agent or host JWT there only optionally (a 200 proves no JWT). */
  optionalAgentJwt?: boolean;
}

const CLIENT_ENDPOINT: OAuthRoute = { unauthorized: "invalid_client", tooManyRequests: "slow_down", otherwise: "invalid_request" };

const endpoint = (limit: LimitName, more: Omit<AuthEndpoint, "limit"> = {}): AuthEndpoint => ({ limit, ...more });

/** Endpoints by exact path. */
export const AUTH_ENDPOINTS: ReadonlyMap<string, AuthEndpoint> = new Map<string, AuthEndpoint>([
  ["/sign-in/email", endpoint("passwordCheck")],
  ["/sign-in/username", endpoint("passwordCheck")],
  ["/change-email", endpoint("passwordCheck")],
  ["/change-password", endpoint("passwordCheck")],
  ["/request-password-reset", endpoint("accountMail")],
  ["/send-verification-email", endpoint("accountMail")],
  [AUTH_PATHS.register, endpoint("register", { oauth: { ...CLIENT_ENDPOINT, otherwise: "invalid_client_metadata" } })], // RFC 7591 §3.2.2
  ["/device", endpoint("deviceUserCode")],
  ["/device/approve", endpoint("deviceUserCode")],
  ["/device/deny", endpoint("deviceUserCode")],
  ["/agent-approval", endpoint("approval")],
  ["/agent/approve-capability", endpoint("approval")],
  [AUTH_PATHS.token, endpoint("client", { oauth: CLIENT_ENDPOINT })],
  [AUTH_PATHS.par, endpoint("client", { oauth: CLIENT_ENDPOINT })], // RFC 9126 §2.3
  [AUTH_PATHS.introspect, endpoint("client", { oauth: CLIENT_ENDPOINT })], // RFC 7662 §2.3
  [AUTH_PATHS.revoke, endpoint("client", { oauth: CLIENT_ENDPOINT, clientIdSuffices: true })], // RFC 7009 §2.2.1
  [AUTH_PATHS.deviceCode, endpoint("client", { oauth: CLIENT_ENDPOINT, clientIdSuffices: true })], // RFC 8628 §3.2
  [AUTH_PATHS.backchannelAuthentication, endpoint("client", { oauth: CLIENT_ENDPOINT })], // CIBA §13
  [AUTH_PATHS.userinfo, endpoint("token", { oauth: { ...CLIENT_ENDPOINT, unauthorized: "invalid_token" } })], // OIDC Core §5.3.3, RFC 6750 §3.1
  ["/capability/list", endpoint("agent", { optionalAgentJwt: true })],
  ["/capability/describe", endpoint("agent", { optionalAgentJwt: true })],
]);

/** Endpoints by path prefix, after the exact paths, first match wins. */
const BY_PREFIX: ReadonlyArray<readonly [string, AuthEndpoint]> = [
  ["/two-factor/verify-", endpoint("passwordCheck")],
  ["/sign-up/", endpoint("signUp")],
  ["/forget-password", endpoint("accountMail")],
  ["/reset-password", endpoint("accountMail")],
  // RFC 7592 §2: the client configuration endpoint, authenticated by a bearer token.
  [`${AUTH_PATHS.register}/`, endpoint("token", { oauth: { unauthorized: "invalid_token", tooManyRequests: "slow_down", otherwise: "invalid_client_metadata" } })],
  ["/agent/", endpoint("agent")],
  ["/capability/", endpoint("agent")],
];

/** Any other endpoint: counted per session when it has one, else per address. */
const OTHER: AuthEndpoint = endpoint("session");

/** The endpoint at `path` (under BASE_PATH, no trailing slash). */
export function authEndpointOf(path: string): AuthEndpoint {
  return AUTH_ENDPOINTS.get(path) ?? BY_PREFIX.find(([prefix]) => path.startsWith(prefix))?.[1] ?? OTHER;
}

/** The paths of agent-auth's routes that take an agent or host JWT optionally. */
export const AGENT_OPTIONAL_AUTH_PATHS: ReadonlySet<string> = new Set([...AUTH_ENDPOINTS].filter(([, e]) => e.optionalAgentJwt).map(([path]) => path));
