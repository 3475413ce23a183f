import { APIError } from "better-auth/api";
import { PROBLEM_CODES, type ProblemCode, type ProblemEntry } from "./problem-codes.js";

/**
 * The error vocabulary of our own routes. Two families, as the spec says: RFC 9457 problem
 * details for our JSON routes (codes: lib/problem-codes.ts), RFC 6749 error objects for
 * OAuth endpoints (codes: OAUTH_ERROR_CODES below). Which route speaks which family is
 * lib/error-families.ts; only `respond.ts` renders them.
 */
export const PROBLEM_TITLES: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  409: "Conflict",
  413: "Content Too Large",
  415: "Unsupported Media Type",
  422: "Unprocessable Content",
  429: "Too Many Requests",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
};

export interface InvalidParam {
  /** JSON pointer to the offending member, e.g. `/redirect_uris/0`. */
  pointer: string;
  reason: string;
}

export class ProblemError extends Error {
  override name = "ProblemError";
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly extra: { code?: ProblemCode; type?: string; errors?: InvalidParam[]; headers?: Record<string, string> } = {},
  ) {
    super(detail);
  }
}

/** The problem of a catalog entry (lib/problem-codes.ts), with its detail or a more precise one. */
export function problem(entry: ProblemEntry, extra: { detail?: string; errors?: InvalidParam[]; headers?: Record<string, string> } = {}): ProblemError {
  return new ProblemError(entry.status, extra.detail ?? entry.detail, { code: entry.code, errors: extra.errors, headers: extra.headers });
}

export const problems = {
  badRequest: (detail: string, errors?: InvalidParam[]) => new ProblemError(400, detail, { errors }),
  unauthorized: (detail = "Authentication is required.") => new ProblemError(401, detail),
  forbidden: (detail = "You may not do this.") => new ProblemError(403, detail),
  /**
   * RFC 6750 §3.1: a valid access token without the scope the resource needs is answered 403
   * `insufficient_scope`, naming the scope in WWW-Authenticate so the client can ask for it.
   */
  insufficientScope: (scope: string) =>
    problem(PROBLEM_CODES.insufficient_scope, {
      detail: `This access token was not granted the "${scope}" scope; ask the user to authorize it.`,
      headers: { "www-authenticate": `Bearer error="insufficient_scope", scope="${scope}"` },
    }),
  notFound: (detail = "There is nothing here.") => new ProblemError(404, detail),
  conflict: (detail: string) => new ProblemError(409, detail),
  // The unread rest of the body is dropped with the connection: say so, or a keep-alive client reuses a dead socket.
  tooLarge: (detail = "The request body is too large.") => new ProblemError(413, detail, { headers: { connection: "close" } }),
  unsupportedMediaType: (detail = "Send application/json.") => new ProblemError(415, detail),
  tooManyRequests: (retryAfter: number) =>
    new ProblemError(429, "Too many requests; try again later.", { headers: { "retry-after": String(retryAfter) } }),
};

/**
 * Every `error` our OAuth endpoints answer (lib/error-families.ts names those endpoints),
 * with the status it is usually answered with. Nothing outside this list goes on the wire
 * there: tests/meta/error-catalog.test.ts checks the sources and live answers against it.
 */
export const OAUTH_ERROR_CODES = {
  // RFC 6749 §5.2 (token endpoint).
  invalid_request: { status: 400 },
  invalid_client: { status: 401 },
  invalid_grant: { status: 400 },
  unauthorized_client: { status: 400 },
  unsupported_grant_type: { status: 400 },
  invalid_scope: { status: 400 },
  // RFC 6749 §4.1.2.1 (authorization endpoint; RFC 8628 §3.5 reuses access_denied).
  access_denied: { status: 400 },
  unsupported_response_type: { status: 400 },
  server_error: { status: 500 },
  temporarily_unavailable: { status: 503 },
  // RFC 6750 §3.1 (userinfo, and RFC 7662 introspection's caller).
  invalid_token: { status: 401 },
  insufficient_scope: { status: 403 },
  // RFC 7009 §2.2.1 (revocation).
  unsupported_token_type: { status: 400 },
  // RFC 7591 §3.2.2 (dynamic client registration).
  invalid_redirect_uri: { status: 400 },
  invalid_client_metadata: { status: 400 },
  invalid_software_statement: { status: 400 },
  unapproved_software_statement: { status: 400 },
  // RFC 8628 §3.5 (device authorization grant, at the token endpoint).
  authorization_pending: { status: 400 },
  slow_down: { status: 400 },
  expired_token: { status: 400 },
  // RFC 8707 §2 (resource indicators: oauth-provider answers an unknown `resource` with it).
  invalid_target: { status: 400 },
  // RFC 9449 §5, §8 (DPoP at the token endpoint; 401 with WWW-Authenticate at a resource, §7.1, §9).
  invalid_dpop_proof: { status: 400 },
  use_dpop_nonce: { status: 400 },
  // OpenID CIBA §13 (backchannel authentication endpoint).
  unknown_user_id: { status: 400 },
  invalid_binding_message: { status: 400 },
  // RFC 9396 §5 (rich authorization requests).
  invalid_authorization_details: { status: 400 },
} as const satisfies Record<string, { status: number }>;
export type OAuthErrorCode = keyof typeof OAUTH_ERROR_CODES;

export function isOAuthErrorCode(code: unknown): code is OAuthErrorCode {
  return typeof code === "string" && Object.hasOwn(OAUTH_ERROR_CODES, code);
}

export class OAuthError extends Error {
  override name = "OAuthError";
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
    /** A status other than the code's usual one (a 413 `invalid_request`), and extra headers. */
    readonly extra: { status?: number; headers?: Record<string, string> } = {},
  ) {
    super(description);
  }
  get status(): number {
    return this.extra.status ?? OAUTH_ERROR_CODES[this.error].status;
  }
}

/** SQLSTATE 23505 (PostgreSQL) and SQLite's extended result codes for a UNIQUE or PRIMARY KEY clash. */
const UNIQUE_VIOLATION_CODES = new Set(["23505", "SQLITE_CONSTRAINT_UNIQUE", "SQLITE_CONSTRAINT_PRIMARYKEY"]);

export function isUniqueViolation(err: unknown): boolean {
  return typeof err === "object" && err !== null && UNIQUE_VIOLATION_CODES.has(String((err as { code?: unknown }).code));
}

/**
 * A write that clashed with a unique constraint: someone else already holds that value (an
 * e-mail address, a bapId), usually because two requests raced past the same existence check.
 * That is the caller's conflict, not our fault: 409, never 500 (RFC 9110 §15.5.10).
 *
 * lib/db/unit-of-work.ts raises it for every query, so it reaches both families. It is a better-auth
 * APIError, which better-auth's router answers as `{code, message}` with status 409; respond.ts
 * renders it as a 409 problem on our own routes. `code` keeps the database's code, so
 * dependencies that detect a clash by that code to retry (better-auth's device codes,
 * oauth-provider's client ids) still recognise it.
 */
export class UniqueViolation extends APIError {
  readonly code: string;
  constructor(cause: { code?: unknown }) {
    super("CONFLICT", { code: PROBLEM_CODES.ALREADY_EXISTS.code, message: PROBLEM_CODES.ALREADY_EXISTS.detail });
    this.code = String(cause.code);
  }
}

/** Seconds a client is asked to wait (Retry-After) after a 503 for an unreachable dependency. */
export const UNAVAILABLE_RETRY_AFTER = 1;

/**
 * A dependency (the database, Redis) did not answer: a connection refused, reset or dropped
 * (a restart, a failover), the pool closed at shutdown, a lock not granted in time. The request
 * fails at once as a 503 with Retry-After, never a 500 or a hang: a problem on our routes,
 * `temporarily_unavailable` (RFC 6749 §4.1.2.1) on the OAuth endpoints (respond.ts), better-auth's
 * `{code, message}` elsewhere. Like UniqueViolation it is an APIError, so better-auth's router
 * answers it as a 503 too. Raised by lib/db/unit-of-work.ts for every query and by the Redis users
 * (lib/redis.ts, lib/bitcoin-auth.ts), from `cause` (kept for the log, never sent).
 */
export class ServiceUnavailable extends APIError {
  constructor(
    readonly dependency: "database" | "redis",
    override readonly cause?: unknown,
  ) {
    const entry = PROBLEM_CODES.TEMPORARILY_UNAVAILABLE;
    super("SERVICE_UNAVAILABLE", { code: entry.code, message: entry.detail }, { "retry-after": String(UNAVAILABLE_RETRY_AFTER) });
  }
}

/** node's socket errors when a server is down or goes away. */
const NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN"]);
/**
 * PostgreSQL SQLSTATEs of a server that is going or not yet there: class 08 (connection
 * exception), 57P01-57P03 (admin shutdown, crash shutdown, cannot connect now: starting up or
 * shutting down), 53300 (too many connections).
 */
const UNAVAILABLE_SQLSTATE = /^(08...|57P0[123]|53300)$/;
/** node-postgres's own words for a connection that failed or is gone (they carry no code). */
const PG_CONNECTION_MESSAGES = /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed and is not queryable|Cannot use a pool after calling end)/;

/**
 * Whether a database driver's error says the database could not be reached or held a lock past
 * its wait (SQLite's SQLITE_BUSY after busy_timeout), rather than refusing the statement itself.
 */
export function isUnavailable(err: unknown): boolean {
  if (typeof err !== "object" || err === null) return false;
  const code = String((err as { code?: unknown }).code ?? "");
  if (NETWORK_CODES.has(code) || UNAVAILABLE_SQLSTATE.test(code) || code.startsWith("SQLITE_BUSY")) return true;
  const message = (err as { message?: unknown }).message;
  return typeof message === "string" && PG_CONNECTION_MESSAGES.test(message);
}
