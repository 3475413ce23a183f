import { createHash, timingSafeEqual } from "node:crypto";
import { Hono, type Context } from "hono";
import { ProblemError } from "../../lib/errors.js";
import { problemResponse } from "../../lib/respond.js";
import type { Metrics } from "../../lib/metrics.js";
import { noStore, type RouteDeps, type RouteEnv } from "../middleware.js";

/**
 * GET /metrics: the Prometheus exposition of this instance (lib/metrics.ts), for a scraper that
 * sends `Authorization: Bearer <METRICS_TOKEN>`. Mounted only when METRICS_TOKEN is set, so by
 * default nothing is exposed (the path answers 404 like any unknown one).
 */
export interface MetricsDeps extends RouteDeps {
  metrics: Metrics;
  /** METRICS_TOKEN. */
  token: string;
}

type Ctx = Context<RouteEnv<MetricsDeps>>;

const digest = (text: string) => createHash("sha256").update(text, "utf8").digest();

/** The bearer token equals the setting; compared in constant time over digests of equal length. */
function hasToken(header: string | undefined, token: string): boolean {
  const given = /^Bearer (\S+)$/i.exec(header ?? "")?.[1];
  return given !== undefined && timingSafeEqual(digest(given), digest(token));
}

const UNAUTHORIZED = new ProblemError(401, "Send the metrics token as a Bearer token.", { headers: { "www-authenticate": 'Bearer realm="metrics"' } });

async function exposition(c: Ctx) {
  const { metrics, token } = c.var.deps;
  // RFC 6750 §3: a missing or wrong token is a 401 naming the Bearer scheme.
  if (!hasToken(c.req.header("authorization"), token)) return problemResponse(UNAUTHORIZED, c.req.path);
  return c.body(await metrics.registry.metrics(), 200, { "content-type": metrics.registry.contentType });
}

export const metricsRoutes = new Hono<RouteEnv<MetricsDeps>>().get("/", noStore, exposition);
