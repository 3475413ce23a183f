import { Hono, type Context } from "hono";
import type { Kysely } from "kysely";
import * as v from "valibot";
import type { Database } from "../../lib/db/tables.js";
import { problem } from "../../lib/errors.js";
import { PROBLEM_CODES } from "../../lib/problem-codes.js";
import { readQuery } from "../../lib/validate.js";
import { ANALYTICS_SPANS, analyticsCsv, loadClientAnalytics, type AnalyticsSpan } from "../../plugins/analytics/report.js";
import { isClientOwnedBy } from "../../plugins/oauth-store/clients.js";
import type { TierService } from "../../plugins/subscriptions/ownership.js";
import { TIERS } from "../../plugins/subscriptions/tiers.js";
import type { RouteDeps, RouteEnv } from "../middleware.js";

/**
 * Per-client analytics (Pro), for the client's owner (session):
 *
 *   GET /api/clients/{clientId}/analytics?days=7|30|90[&format=csv]   JSON (or CSV)
 *   GET /api/clients/{clientId}/analytics.csv?days=...                CSV
 *
 * Someone else's client answers like an unknown one (404); an owner whose tier is not Pro gets
 * 403 naming the tier (the tier service decides, so a lapsed tier stops the answers; the counts
 * are kept). The counts come from plugins/analytics, written every ANALYTICS_FLUSH_MS.
 */
export interface ClientAnalyticsDeps extends RouteDeps {
  db: Kysely<Database>;
  tiers: TierService;
}

type AnalyticsEnv = RouteEnv<ClientAnalyticsDeps>;
type Ctx = Context<AnalyticsEnv>;

const Days = v.pipe(
  v.optional(v.string(), "30"),
  v.transform(Number),
  v.custom<AnalyticsSpan>((n) => (ANALYTICS_SPANS as readonly unknown[]).includes(n), `must be one of ${ANALYTICS_SPANS.join(", ")}`),
);
export const AnalyticsQuery = v.object({ days: Days, format: v.optional(v.picklist(["json", "csv"], "must be json or csv"), "json") });

/** The feature's tier: analytics are Pro's (plugins/subscriptions/tiers.ts). */
const ANALYTICS_TIER = TIERS.pro;

/** The owner's client, on the owner's Pro tier; else the problem the route answers. */
export async function assertAnalyticsAllowed(deps: ClientAnalyticsDeps, userId: string, clientId: string): Promise<void> {
  if (!clientId || clientId.length > 255 || !(await isClientOwnedBy(deps.db, clientId, userId))) throw problem(PROBLEM_CODES.CLIENT_NOT_FOUND);
  const tier = TIERS[await deps.tiers.tierOf(userId)];
  if (tier.id !== ANALYTICS_TIER.id) {
    throw problem(PROBLEM_CODES.TIER_REQUIRED, { detail: `Analytics come with the ${ANALYTICS_TIER.name} tier; your tier is ${tier.name}. Upgrade your subscription to see them.` });
  }
}

async function report(c: Ctx, csv: boolean) {
  const query = readQuery(c, AnalyticsQuery);
  const clientId = c.req.param("clientId") ?? "";
  await assertAnalyticsAllowed(c.var.deps, c.var.session.user.id, clientId);
  const analytics = await loadClientAnalytics(c.var.deps.db, clientId, query.days);
  if (!csv && query.format !== "csv") return c.json(analytics);
  const name = `analytics-${clientId.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64)}-${analytics.days}d.csv`;
  return c.body(analyticsCsv(analytics), 200, { "content-type": "text/csv; charset=utf-8", "content-disposition": `attachment; filename="${name}"` });
}

const analyticsJson = (c: Ctx) => report(c, false);
const analyticsCsvFile = (c: Ctx) => report(c, true);

/** The client-analytics family (app.ts) at /api/clients/:clientId/analytics: signed in, no-store, same site. */
export const clientAnalyticsRoutes = new Hono<AnalyticsEnv>().get("/", analyticsJson);
/** The same report as a CSV file, at /api/clients/:clientId/analytics.csv. */
export const clientAnalyticsCsvRoutes = new Hono<AnalyticsEnv>().get("/", analyticsCsvFile);
