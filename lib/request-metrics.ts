import type { Context, MiddlewareHandler } from "hono";
import { routePath } from "hono/route";
import type { Metrics } from "./metrics.js";

const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);
/** The route label of answers no route matched (the app's notFound). */
export const UNMATCHED_ROUTE = "unmatched";

const unmatched = new WeakSet<Context>();
/** Called by the app's notFound handler: the request is counted under one label, not its path. */
export function markUnmatched(c: Context): void {
  unmatched.add(c);
}

/**
 * Counts and times every answer by method, route and status; first in the app, so it sees the
 * final answer (problems and better-auth's included). The route is the pattern of the handler
 * that answered (Hono's routePath, e.g. `/api/agents/:id`), never the raw path, so the label's
 * values are as many as the routes; `refine` narrows a catch-all (better-auth's) to its endpoint.
 */
export function requestMetrics(metrics: Metrics, refine: (route: string, path: string) => string = (route) => route): MiddlewareHandler {
  return async (c, next) => {
    const started = process.hrtime.bigint();
    await next();
    const route = unmatched.has(c) ? UNMATCHED_ROUTE : refine(routePath(c), c.req.path);
    const labels = { method: METHODS.has(c.req.method) ? c.req.method : "other", route, status: String(c.res.status) };
    metrics.requests.inc(labels);
    metrics.requestDuration.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
    if (c.res.status === 429) metrics.rateLimited.inc({ route });
  };
}

/**
 * The route label of a request to better-auth's catch-all: `basePath` + the path of the endpoint
 * it names (`/api/auth/callback/:id`), or `basePath/other` for a path no endpoint declares.
 */
export function endpointRoute(basePath: string, endpointPaths: Iterable<string>): (path: string) => string {
  const exact = new Set<string>();
  const patterns: { route: string; re: RegExp }[] = [];
  for (const path of endpointPaths) {
    if (!/[:*]/.test(path)) exact.add(path);
    else patterns.push({ route: path, re: new RegExp(`^${path.split("/").map(segmentPattern).join("/")}$`) });
  }
  return (path) => {
    const rest = path.startsWith(basePath + "/") ? path.slice(basePath.length) : "";
    if (exact.has(rest)) return basePath + rest;
    const found = patterns.find(({ re }) => re.test(rest));
    return `${basePath}${found ? found.route : "/other"}`;
  };
}

function segmentPattern(segment: string): string {
  if (segment.startsWith(":")) return "[^/]+";
  if (segment === "**" || segment === "*") return ".*";
  return segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
