import { APIError } from "better-auth/api";

/**
 * The whole error vocabulary. Two families, as the spec says: RFC 9457 problem details
 * for our JSON routes, RFC 6749 error objects for OAuth endpoints. Only `respond.ts`
 * renders them.
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
    readonly extra: { code?: string; type?: string; errors?: InvalidParam[]; headers?: Record<string, string> } = {},
  ) {
    super(detail);
  }
}

export const problems = {
  badRequest: (detail: string, errors?: InvalidParam[]) => new ProblemError(400, detail, { errors }),
  unauthorized: (detail = "Authentication is required.") => new ProblemError(401, detail),
  forbidden: (detail = "You may not do this.", code?: string) => new ProblemError(403, detail, { code }),
  /**
   * RFC 6750 §3.1: a valid access token without the scope the resource needs is answered 403
   * `insufficient_scope`, naming the scope in WWW-Authenticate so the client can ask for it.
   */
  insufficientScope: (scope: string) =>
    new ProblemError(403, `This access token was not granted the "${scope}" scope; ask the user to authorize it.`, {
      code: "insufficient_scope",
      headers: { "www-authenticate": `Bearer error="insufficient_scope", scope="${scope}"` },
    }),
  notFound: (detail = "There is nothing here.") => new ProblemError(404, detail),
  conflict: (detail: string, code?: string) => new ProblemError(409, detail, { code }),
  // The unread rest of the body is dropped with the connection: say so, or a keep-alive client reuses a dead socket.
  tooLarge: (detail = "The request body is too large.") => new ProblemError(413, detail, { headers: { connection: "close" } }),
  unsupportedMediaType: (detail = "Send application/json.") => new ProblemError(415, detail),
  tooManyRequests: (retryAfter: number) =>
    new ProblemError(429, "Too many requests; try again later.", { headers: { "retry-after": String(retryAfter) } }),
};

/** RFC 6749 §5.2 error codes, with the status each one is answered with. */
export const OAUTH_ERROR_STATUS = {
  invalid_request: 400,
  invalid_client: 401,
  invalid_grant: 400,
  unauthorized_client: 400,
  unsupported_grant_type: 400,
  invalid_scope: 400,
  invalid_token: 401,
  server_error: 500,
} as const;
export type OAuthErrorCode = keyof typeof OAUTH_ERROR_STATUS;

export class OAuthError extends Error {
  override name = "OAuthError";
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
  ) {
    super(description);
  }
  get status(): number {
    return OAUTH_ERROR_STATUS[this.error];
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
 * lib/db.ts raises it for every query, so it reaches both families. It is a better-auth
 * APIError, which better-auth's router answers as `{code, message}` with status 409; respond.ts
 * renders it as a 409 problem on our own routes. `code` keeps the database's code, so
 * dependencies that detect a clash by that code to retry (better-auth's device codes,
 * oauth-provider's client ids) still recognise it.
 */
export class UniqueViolation extends APIError {
  readonly code: string;
  constructor(cause: { code?: unknown }) {
    super("CONFLICT", { code: "ALREADY_EXISTS", message: "This already exists (unique constraint): it may have been created just now by another request." });
    this.code = String(cause.code);
  }
}
