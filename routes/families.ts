import { Hono, type Env, type MiddlewareHandler } from "hono";
import { problems } from "../lib/errors.js";
import { declaredBodyLimit } from "../lib/request-body.js";
import { problemResponse } from "../lib/respond.js";
import { withDeps, type RouteDeps, type RouteEnv } from "./middleware.js";

/**
 * A family of routes as app.ts mounts it: its mount paths and what each serves, the largest
 * body it reads, and the guards every request to it passes before a handler. app.ts is a table
 * of these; `mountFamilies` works out the order, so the table's own order does not matter.
 */
export interface RouteFamily {
  readonly name: string;
  /** Bytes, or a middleware that enforces the family's own limit (its own answer, or a faster path). */
  readonly bodyLimit: number | MiddlewareHandler;
  /** Mount path -> the family's router there, its body limit, guards and dependencies applied. */
  readonly mounts: ReadonlyMap<string, Hono<Env>>;
}

export interface FamilySpec<Deps extends RouteDeps, Extra extends object> {
  name: string;
  /** Bytes, or the family's own limit middleware (it may read `c.var.deps`). */
  bodyLimit: number | MiddlewareHandler<any>;
  /**
   * Run in order, after the body limit, for every request under the family's mounts (unmatched
   * paths included), with `c.var.deps` set. Typed loosely as Hono's own `.use()` is: a guard
   * reads only what routes/middleware.ts's RouteEnv promises.
   */
  guards?: MiddlewareHandler<any>[];
  deps: Deps;
  /** Mount path -> router; the routers' Env must match `deps`. */
  routes: Record<string, Hono<RouteEnv<Deps, Extra>>>;
}

/** Over the limit: a 413 problem before any handler reads the body. */
const tooLarge = () => problemResponse(problems.tooLarge());

/** A family whose routers read `c.var.deps` (routes/middleware.ts withDeps). */
export function family<Deps extends RouteDeps, Extra extends object>({ name, bodyLimit: limit, guards = [], deps, routes }: FamilySpec<Deps, Extra>): RouteFamily {
  const limiter = typeof limit === "number" ? declaredBodyLimit(limit, tooLarge) : limit;
  const mounts = new Map<string, Hono<Env>>();
  for (const [path, router] of Object.entries(routes)) {
    const guarded = new Hono<RouteEnv<Deps, Extra>>().use(limiter, ...guards).route("/", router);
    mounts.set(path, withDeps(guarded, deps) as unknown as Hono<Env>);
  }
  return { name, bodyLimit: limit, mounts };
}

/** A family that brings its own dependencies (the pages, the OpenAPI document): only the body limit is added. */
export function ownFamily(name: string, limit: number, routes: Record<string, Hono<any>>): RouteFamily {
  const limiter = declaredBodyLimit(limit, tooLarge);
  const mounts = new Map(Object.entries(routes).map(([path, router]) => [path, new Hono<Env>().use(limiter).route("/", router)] as const));
  return { name, bodyLimit: limit, mounts };
}

/** Path segments of a mount: `/` has none, `/api/certificates/wallet-binding` three. */
const depth = (path: string) => path.split("/").filter(Boolean).length;

/**
 * Mounts every family, the most specific mount path first (`/api/certificates/wallet-binding`
 * before `/api/certificates`, `/api/auth/jwks` before `/api/auth`, `/` last). In Hono a request
 * runs the matching middleware and handlers in the order they were added, so a family's body
 * limit and guards see a request only after every more specific family has declined it: no
 * family's rules reach another's routes, whatever the order of the table. Two families on one
 * mount path are refused.
 */
export function mountFamilies(app: Hono<any>, families: readonly RouteFamily[]): void {
  const mounts = families.flatMap((f) => [...f.mounts].map(([path, router]) => ({ path, router, family: f.name })));
  const seen = new Map<string, string>();
  for (const { path, family: name } of mounts) {
    const other = seen.get(path);
    if (other) throw new Error(`route families ${other} and ${name} both mount ${path}`);
    seen.set(path, name);
  }
  mounts.sort((a, b) => depth(b.path) - depth(a.path) || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  for (const { path, router } of mounts) app.route(path, router);
}
