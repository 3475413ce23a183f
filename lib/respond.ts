import type { Context } from "hono";
import type { RequestIdVariables } from "hono/request-id";
import { OAuthError, PROBLEM_TITLES, ProblemError, UniqueViolation } from "./errors.js";
import type { Logger } from "./logger.js";

const NO_STORE = { "cache-control": "no-store", pragma: "no-cache" };

/** RFC 9457 problem details. */
export function problemResponse(err: ProblemError, instance?: string): Response {
  const body: Record<string, unknown> = {
    type: err.extra.type ?? "about:blank",
    title: PROBLEM_TITLES[err.status] ?? "Error",
    status: err.status,
    detail: err.detail,
    ...(instance ? { instance } : {}),
    ...(err.extra.code ? { code: err.extra.code } : {}),
    ...(err.extra.errors ? { errors: err.extra.errors } : {}),
  };
  return new Response(JSON.stringify(body), {
    status: err.status,
    headers: { "content-type": "application/problem+json", ...NO_STORE, ...err.extra.headers },
  });
}

/** RFC 6749 §5.2 error object. */
export function oauthErrorResponse(err: OAuthError): Response {
  const headers: Record<string, string> = { "content-type": "application/json", ...NO_STORE };
  if (err.status === 401) headers["www-authenticate"] = `Bearer error="${err.error}"`;
  return new Response(JSON.stringify({ error: err.error, error_description: err.description }), { status: err.status, headers });
}

/**
 * The only error renderer. Known errors render as themselves; anything else becomes a
 * generic 500 with no internals, and the cause goes to the log under a request id.
 */
export function renderError<E extends { Variables: RequestIdVariables }>(logger: Logger) {
  return (err: Error, c: Context<E>): Response => {
    if (err instanceof ProblemError) return problemResponse(err, c.req.path);
    if (err instanceof OAuthError) return oauthErrorResponse(err);
    if (err instanceof UniqueViolation) return problemResponse(new ProblemError(409, err.message, { code: "ALREADY_EXISTS" }), c.req.path);
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

/** RFC 6749 §5.2 code for a better-auth `{message, code}` error on an OAuth endpoint. */
function oauthCodeFor(status: number, path: string): string {
  if (status === 401) return path.endsWith("/oauth2/userinfo") ? "invalid_token" : "invalid_client";
  if (status === 429) return "slow_down";
  if (path.endsWith("/oauth2/register")) return "invalid_client_metadata";
  return "invalid_request";
}

/**
 * OAuth endpoints answer RFC 6749 error objects. better-auth's router answers some
 * failures before the endpoint runs (malformed JSON, a wrong content type, rate limits)
 * with its own `{message, code}` shape; this rewrites exactly those, and only on errors.
 */
export async function asOAuthError(res: Response, path: string): Promise<Response> {
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
  return new Response(JSON.stringify({ error: oauthCodeFor(res.status, path), error_description: description }), { status: res.status, headers });
}
