import { Hono, type Context, type Env, type MiddlewareHandler } from "hono";
import { createMiddleware } from "hono/factory";
import type { RequestIdVariables } from "hono/request-id";
import type { Auth } from "../auth.config.js";
import { problems } from "../lib/errors.js";
import { CLIENT_IP_HEADER } from "../lib/client-address.js";
import type { Limiter } from "../lib/rate-limit.js";
import { findSession, requireSession, type SessionWithUser } from "./session.js";

/**
 * The typed context every route file shares (Hono's `Env`): what middleware has established
 * before a handler runs. Handlers read `c.var.session` instead of looking the session up
 * themselves, so the guard and the handler cannot disagree about who is calling.
 */
export interface AppEnv {
  Variables: RequestIdVariables & {
    /** Set by `signedIn` (always) and `maybeSignedIn` (when there is one). */
    session: SessionWithUser;
  };
}

/** What every route family's mount provides; a family's own dependencies extend it. */
export interface RouteDeps {
  auth: Auth;
}

/**
 * A route family's Env: AppEnv, its dependencies as `c.var.deps` (set once at the mount by
 * `withDeps`), and whatever its own middleware establishes (`Extra`), so handlers are
 * module-level functions that close over nothing.
 */
export interface RouteEnv<Deps extends RouteDeps = RouteDeps, Extra extends object = object> {
  Variables: AppEnv["Variables"] & { deps: Deps } & Extra;
}

/** A module-level router, mounted with its dependencies: every handler under it reads `c.var.deps`. */
export function withDeps<Deps extends RouteDeps, Extra extends object>(router: Hono<RouteEnv<Deps, Extra>>, deps: Deps): Hono<RouteEnv<Deps>> {
  const provide = createMiddleware<RouteEnv<Deps>>(async (c, next) => {
    c.set("deps", deps);
    await next();
  });
  return new Hono<RouteEnv<Deps>>().use(provide).route("/", router);
}

/**
 * better-auth's own session lookup (cookie or bearer session token), with the auth of the
 * mount's dependencies; 401 problem without one.
 */
export const signedIn = createMiddleware<RouteEnv>(async (c, next) => {
  c.set("session", await requireSession(c.var.deps.auth, c.req.raw.headers));
  await next();
});

/** The session when there is one; handlers that answer anonymous callers too read `c.get("session")`. */
export const maybeSignedIn = createMiddleware<RouteEnv>(async (c, next) => {
  const session = await findSession(c.var.deps.auth, c.req.raw.headers);
  if (session) c.set("session", session);
  await next();
});

export const NO_STORE_HEADERS = { "cache-control": "no-store", pragma: "no-cache" } as const;

/**
 * Answers that carry personal data or credentials are never cached (RFC 9111 §5.2.2.5;
 * RFC 6749 §5.1 for token responses). Set after the handler so every answer gets it,
 * errors included.
 */
export const noStore: MiddlewareHandler = async (c, next) => {
  await next();
  for (const [name, value] of Object.entries(NO_STORE_HEADERS)) c.res.headers.set(name, value);
};

/**
 * Browsers send Origin on every cross-origin POST; our pages set `referrer: no-referrer`,
 * under which the Fetch standard sends `Origin: null` even for same-origin posts, and then
 * the browser-set Sec-Fetch-Site decides (as in better-auth's own origin check).
 */
export function isSameOrigin(c: Context, authUrl: string): boolean {
  const origin = c.req.header("origin");
  if (origin && origin !== "null") return origin === new URL(authUrl).origin;
  return c.req.header("sec-fetch-site") === "same-origin";
}

/** State-changing requests from our own pages only; `refuse` renders the answer for the rest. */
export function sameOriginOnly<E extends AppEnv>(authUrl: string, refuse: (c: Context<E>) => Response | Promise<Response>): MiddlewareHandler<E> {
  return async (c, next) => {
    if (c.req.method === "GET" || c.req.method === "HEAD" || isSameOrigin(c, authUrl)) return next();
    return refuse(c);
  };
}

/**
 * A cookie alone must not change state from another site: a browser sends Origin (and
 * Sec-Fetch-Site) on every cross-origin POST and DELETE; API clients with a bearer session
 * send neither, so they pass. GET and HEAD pass. Answers a 403 problem.
 */
export function refuseOtherSites<E extends Env>(authUrlOf: (c: Context<E>) => string): MiddlewareHandler<E> {
  return async (c, next) => {
    if (c.req.method === "GET" || c.req.method === "HEAD") return next();
    const origin = c.req.header("origin");
    if ((origin && origin !== "null" && origin !== new URL(authUrlOf(c)).origin) || c.req.header("sec-fetch-site") === "cross-site") throw problems.forbidden("This request must come from our own pages.");
    await next();
  };
}

/** 429 past the limiter's budget for this client IP (OWASP ASVS 2.2.1, anti-automation). */
export async function limit(limiter: Limiter | null, c: Context) {
  if (!limiter) return;
  const { allowed, retryAfter } = await limiter.hit(c.req.header(CLIENT_IP_HEADER) ?? "unknown");
  if (!allowed) throw problems.tooManyRequests(retryAfter);
}
