import { Hono, type Context, type MiddlewareHandler } from "hono";
import { errorFamilyOf } from "../../lib/error-families.js";
import { authRequestOf } from "../../lib/auth-request.js";
import { OAuthError, problems } from "../../lib/errors.js";
import { declaredBodyLimit, withBufferedBody } from "../../lib/request-body.js";
import { asOAuthError, betterAuthErrorResponse, oauthErrorResponse, problemResponse } from "../../lib/respond.js";
import { RAW_FORM_BODY } from "../../lib/validate.js";
import { ACCOUNT_RESPONSE_ERROR_CODES } from "../../plugins/account-responses/error-codes.js";
import type { RouteDeps, RouteEnv } from "../middleware.js";

/** better-auth's surface under BASE_PATH: its handler, and AUTH_URL's path ("" without one, lib/path-prefix.ts). */
export interface BetterAuthDeps extends RouteDeps {
  prefix: string;
}

type Ctx = Context<RouteEnv<BetterAuthDeps>>;

/** Largest body any /api route reads; past it a 413 problem, never a hang. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** 413 in the family of the route: RFC 6749 `invalid_request` on the OAuth endpoints (as the member-key check answers), a problem elsewhere. */
function tooLarge(path: string): Response {
  const problem = problems.tooLarge();
  if (errorFamilyOf(path) === "rfc6749") return oauthErrorResponse(new OAuthError("invalid_request", problem.detail, { status: 413, headers: { connection: "close" } }));
  return problemResponse(problem);
}
/** The limit on a declared length is a comparison; only a chunked body is counted as it streams. */
export const authBodyLimit: MiddlewareHandler = declaredBodyLimit(MAX_BODY_BYTES, (c) => tooLarge(c.req.path));

/** 400 in the family of the route: RFC 6749 on the OAuth endpoints, problem details elsewhere. */
export function refused(path: string, detail: string): Response {
  if (errorFamilyOf(path) === "rfc6749") return oauthErrorResponse(new OAuthError("invalid_request", detail));
  return problemResponse(problems.badRequest(detail), path);
}

/** Every other path under BASE_PATH: the body read once (lib/request-body.ts), then better-auth's handler. */
async function handle(c: Ctx) {
  const req = await withBufferedBody(c.req.raw);
  if (typeof req === "string") return refused(c.req.path, req);
  // better-auth's routes are under AUTH_URL's path (lib/path-prefix.ts): the request it sees names it.
  const { prefix } = c.var.deps;
  // auth.handler reads the request once into its record (lib/auth-request.ts) and applies the
  // limits of lib/limits.ts (auth.config.ts createAuth), 429 with Retry-After.
  const forAuth = prefix ? underPrefix(req, prefix) : req;
  const res = await c.var.deps.auth.handler(forAuth);
  // The OAuth endpoints speak RFC 6749 even where better-auth's router answered for them (lib/auth-endpoints.ts).
  const oauthRoute = authRequestOf(forAuth)?.endpoint.oauth;
  if (oauthRoute) return asOAuthError(res, oauthRoute);
  // better-auth's router answers a method and path it has no endpoint for with an empty 404
  // (and disabledPaths with a plain-text one); the rest of its surface speaks `{message, code}`.
  if (res.status === 404 && !res.headers.get("content-type")?.includes("json")) return betterAuthErrorResponse(404, ACCOUNT_RESPONSE_ERROR_CODES.ENDPOINT_NOT_FOUND);
  // Its session middleware answers a request without a session with a bare 401 (a JSON content
  // type, no body); the spec's 401 carries a message. Its headers stay (they clear the cookie).
  if (res.status === 401 && (await res.clone().text()) === "") return withBody(res, ACCOUNT_RESPONSE_ERROR_CODES.SESSION_REQUIRED);
  return res;
}

/** The answer with a `{message, code}` body instead of its empty one, its headers kept. */
function withBody(res: Response, entry: { code: string; message: string }): Response {
  const headers = new Headers(res.headers);
  headers.set("content-type", "application/json");
  headers.delete("content-length");
  return new Response(JSON.stringify({ message: entry.message, code: entry.code }), { status: res.status, headers });
}

/** The same request at its public path under AUTH_URL's (the raw form text kept, lib/request-body.ts). */
function underPrefix(req: Request, prefix: string): Request {
  const url = new URL(req.url);
  url.pathname = `${prefix}${url.pathname}`;
  const moved = new Request(url, { method: req.method, headers: req.headers, body: req.body, duplex: "half" } as RequestInit);
  const raw = (req as unknown as Record<symbol, unknown>)[RAW_FORM_BODY];
  if (raw !== undefined) Object.defineProperty(moved, RAW_FORM_BODY, { value: raw });
  return moved;
}

/** Mounted at BASE_PATH, after every more specific family under it (routes/families.ts). */
export const betterAuthRoutes = new Hono<RouteEnv<BetterAuthDeps>>().all("/*", handle);
