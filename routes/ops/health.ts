import { Hono, type Context } from "hono";
import { PROBLEM_CODES } from "../../lib/problem-codes.js";
import type { ReadinessReport } from "../../lib/readiness.js";
import type { RouteDeps, RouteEnv } from "../middleware.js";

/**
 * Probes for orchestrators and load balancers: /healthz says the process serves requests
 * (liveness: nothing is checked, so a database outage never gets the process restarted);
 * /readyz says whether it can do its work now (database, Redis, schema). Public, unauthenticated,
 * never cached; they reveal only which dependency fails.
 */
export interface HealthDeps extends RouteDeps {
  readiness: () => Promise<ReadinessReport>;
}

type Ctx = Context<RouteEnv<HealthDeps>>;

function live(c: Ctx) {
  return c.json({ status: "ok" });
}

const NOT_READY = PROBLEM_CODES.NOT_READY;

async function ready(c: Ctx) {
  const report = await c.var.deps.readiness();
  if (report.ready) return c.json({ status: "ready", checks: report.checks });
  // RFC 9457 with the checks as an extension member: a probe reads the status, a person the detail.
  const failing = Object.entries(report.checks).filter(([, result]) => result !== "ok" && result !== "not configured").map(([name, result]) => `${name} ${result}`);
  return c.json(
    { type: "about:blank", title: "Service Unavailable", status: NOT_READY.status, detail: `${NOT_READY.detail} Failing: ${failing.join("; ")}.`, code: NOT_READY.code, checks: report.checks },
    503,
    { "content-type": "application/problem+json", "retry-after": "5" },
  );
}

/** The health family (app.ts): GET /healthz and GET /readyz, no-store. */
export const livenessRoutes = new Hono<RouteEnv<HealthDeps>>().get("/", live);
export const readinessRoutes = new Hono<RouteEnv<HealthDeps>>().get("/", ready);
