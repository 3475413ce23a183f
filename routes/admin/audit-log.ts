import { Hono, type Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { Kysely } from "kysely";
import * as v from "valibot";
import { problem } from "../../lib/errors.js";
import { PROBLEM_CODES } from "../../lib/problem-codes.js";
import { readQuery } from "../../lib/validate.js";
import { AUDIT_EVENTS, auditEventJson, listAuditEvents } from "../../plugins/audit/store.js";
import { signedIn, type RouteDeps, type RouteEnv } from "../middleware.js";
import type { Database } from "../../lib/db/tables.js";

/**
 * GET /api/admin/audit-log: the security events (plugins/audit), newest first, for a signed-in
 * administrator (better-auth's admin plugin: `user.role` "admin"). Paged backwards with
 * `before` (the `at` of the last event of the previous page).
 */
type AdminEnv = RouteEnv<RouteDeps & { db: Kysely<Database> }>;

/** Roles are a comma-separated list in better-auth's admin plugin. */
const isAdmin = (role: unknown) => typeof role === "string" && role.split(",").map((r) => r.trim()).includes("admin");

const adminOnly = createMiddleware<AdminEnv>(async (c, next) => {
  if (!isAdmin((c.var.session.user as { role?: unknown }).role)) throw problem(PROBLEM_CODES.ADMIN_REQUIRED);
  await next();
});

export const AuditLogQuery = v.object({
  limit: v.optional(v.pipe(v.string(), v.regex(/^\d{1,4}$/, "must be a whole number"), v.transform(Number), v.minValue(1), v.maxValue(1000)), "100"),
  before: v.optional(v.pipe(v.string(), v.isoTimestamp("must be an ISO 8601 timestamp"), v.transform((s) => new Date(s)))),
  event: v.optional(v.picklist(AUDIT_EVENTS, `must be one of ${AUDIT_EVENTS.join(", ")}`)),
  userId: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(255))),
});

async function listEvents(c: Context<AdminEnv>) {
  const query = readQuery(c, AuditLogQuery);
  const events = await listAuditEvents(c.var.deps.db, query);
  return c.json({ events: events.map(auditEventJson) });
}

/** Mounted at /api/admin/audit-log. */
export const adminAuditLogRoutes = new Hono<AdminEnv>().get("/", signedIn, adminOnly, listEvents);
