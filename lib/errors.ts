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
