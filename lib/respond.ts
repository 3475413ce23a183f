import type { Context } from "hono";
import type { RequestIdVariables } from "hono/request-id";
import { oauthCodeFor, type OAuthRoute } from "./error-families.js";
import { OAuthError, PROBLEM_TITLES, problem, ProblemError, ServiceUnavailable, UNAVAILABLE_RETRY_AFTER, UniqueViolation, type OAuthErrorCode } from "./errors.js";
import type { Logger } from "./logger.js";
import { PROBLEM_CODES } from "./problem-codes.js";

const NO_STORE = { "cache-control": "no-store", pragma: "no-cache" };

/**
 * RFC 9457 §3.1.5: `instance` is a URI reference. The request path is one, except where the
 * request itself was not (a NUL, a raw non-ASCII character, a `%` without two hex digits):
 * those characters are percent-encoded, the rest left as sent.
 */
export function asUriReference(path: string): string {
  // A lone surrogate has no UTF-8 form: U+FFFD stands for it.
  return path.replace(/%(?![0-9A-Fa-f]{2})|[^A-Za-z0-9\-._~!$&'()*+,;=:@/?#%[\]]/gu, (c) => encodeURIComponent(/^[\ud800-\udfff]$/.test(c) ? "\ufffd" : c));
}

/** RFC 9457 problem details. */
export function problemResponse(err: ProblemError, instance?: string): Response {
  const body: Record<string, unknown> = {
    type: err.extra.type ?? "about:blank",
    title: PROBLEM_TITLES[err.status] ?? "Error",
    status: err.status,
    detail: err.detail,
    ...(instance ? { instance: asUriReference(instance) } : {}),
    ...(err.extra.code ? { code: err.extra.code } : {}),
    ...(err.extra.errors ? { errors: err.extra.errors } : {}),
  };
  return new Response(JSON.stringify(body), {
    status: err.status,
    headers: { "content-type": "application/problem+json", ...NO_STORE, ...err.extra.headers },
  });
}

/** RFC 6749 §5.2 error object: the body of every OAuth error we answer. */
function oauthErrorBody(error: OAuthErrorCode, description: string): string {
  return JSON.stringify({ error, error_description: description });
}

/** RFC 6749 §5.2 error response (plugins answering from a hook use it too: plugins/member-key). */
export function oauthErrorResponse(err: OAuthError): Response {
  return new Response(oauthErrorBody(err.error, err.description), { status: err.status, headers: { "content-type": "application/json", ...NO_STORE, ...err.extra.headers } });
}

/**
 * better-auth's own error body, `{message, code}`, for an answer we give in its family
 * (lib/error-families.ts) where its router gave none; `entry` is a plugin's `$ERROR_CODES` entry.
 */
export function betterAuthErrorResponse(status: number, entry: { code: string; message: string }): Response {
  return new Response(JSON.stringify({ message: entry.message, code: entry.code }), { status, headers: { "content-type": "application/json" } });
}

/**
 * The only error renderer. Known errors render as themselves; anything else becomes a
 * generic 500 with no internals, and the cause goes to the log under a request id.
 */
export function renderError<E extends { Variables: RequestIdVariables }>(logger: Logger) {
  return (err: Error, c: Context<E>): Response => {
    if (err instanceof ProblemError) return problemResponse(err, c.req.path);
    if (err instanceof OAuthError) return oauthErrorResponse(err);
    if (err instanceof UniqueViolation) return problemResponse(problem(PROBLEM_CODES.ALREADY_EXISTS, { detail: err.message }), c.req.path);
    if (err instanceof ServiceUnavailable) {
      logger.warn(`${err.dependency} unavailable`, { err: err.cause, requestId: (c.var as RequestIdVariables).requestId, path: c.req.path });
      return problemResponse(problem(PROBLEM_CODES.TEMPORARILY_UNAVAILABLE, { headers: { "retry-after": String(UNAVAILABLE_RETRY_AFTER) } }), c.req.path);
    }
    const status = (err as { status?: unknown }).status;
    // Hono's own HTTPException (e.g. body-limit) carries a 4xx status: keep it, as a problem.
    if (typeof status === "number" && status >= 400 && status < 500) {
      return problemResponse(new ProblemError(status, PROBLEM_TITLES[status] ?? "The request was refused."), c.req.path);
    }
    const requestId = (c.var as RequestIdVariables).requestId;
    logger.error("unhandled error", { err, requestId, path: c.req.path });
    return problemResponse(new ProblemError(500, `Something went wrong on our side (request ${requestId ?? "unknown"}).`), c.req.path);
  };
}

/**
 * OAuth endpoints answer RFC 6749 error objects. better-auth's router answers some
 * failures before the endpoint runs (malformed JSON, a wrong content type, rate limits)
 * with its own `{message, code}` shape; this rewrites exactly those, and only on errors.
 * A 503 (a dependency down: lib/errors.ts ServiceUnavailable) is `temporarily_unavailable`.
 */
export async function asOAuthError(res: Response, route: OAuthRoute): Promise<Response> {
  if (res.status === 503) return temporarilyUnavailable(res);
  if (res.status < 400 || res.status >= 500) return res;
  const type = res.headers.get("content-type") ?? "";
  let body: Record<string, unknown> | null = null;
  if (type.includes("json")) body = (await res.clone().json().catch(() => null)) as Record<string, unknown> | null;
  if (body && typeof body.error === "string") return res;
  const headers = new Headers(res.headers);
  headers.set("content-type", "application/json");
  headers.set("cache-control", "no-store");
  headers.delete("content-length");
  const description = typeof body?.message === "string" ? body.message : PROBLEM_TITLES[res.status] ?? "The request was refused.";
  return new Response(oauthErrorBody(oauthCodeFor(route, res.status), description), { status: res.status, headers });
}

/** RFC 6749 §4.1.2.1 / §5.2: the 503 of an OAuth endpoint, keeping its Retry-After. */
async function temporarilyUnavailable(res: Response): Promise<Response> {
  const headers = new Headers(res.headers);
  headers.set("content-type", "application/json");
  headers.set("cache-control", "no-store");
  headers.delete("content-length");
  if (!headers.has("retry-after")) headers.set("retry-after", String(UNAVAILABLE_RETRY_AFTER));
  await res.body?.cancel();
  return new Response(oauthErrorBody("temporarily_unavailable", PROBLEM_CODES.TEMPORARILY_UNAVAILABLE.detail), { status: 503, headers });
}
