import { Hono, type Context } from "hono";
import type { Kysely } from "kysely";
import { problems } from "../../lib/errors.js";
import type { Logger } from "../../lib/logger.js";
import { CLIENT_IP_HEADER } from "../../lib/client-address.js";
import { recordAuditEvent } from "../../plugins/audit/store.js";
import { listAuthorizedApps, revokeAuthorizedApp } from "../../plugins/oauth-store/grants.js";
import { signedIn, type RouteDeps, type RouteEnv } from "../middleware.js";
import type { Database } from "../../lib/db/tables.js";

/**
 * The apps a signed-in person has authorized, and revoking one: its consent and every
 * access and refresh token it holds for that person go together. Separate from token
 * revocation (RFC 7009), from ending our session and from signing out of the app.
 */
type AuthorizedAppsEnv = RouteEnv<RouteDeps & { db: Kysely<Database>; logger?: Logger }>;

async function listApps(c: Context<AuthorizedAppsEnv>) {
  return c.json({ apps: await listAuthorizedApps(c.var.deps.db, c.var.session.user.id) });
}

async function revokeApp(c: Context<AuthorizedAppsEnv, "/:clientId">) {
  const { db, logger } = c.var.deps;
  const clientId = c.req.param("clientId");
  if (!(await revokeAuthorizedApp(db, c.var.session.user.id, clientId))) throw problems.notFound("You have not authorized that application.");
  await recordAuditEvent(db, logger, { event: "consent.revoked", userId: c.var.session.user.id, clientId, ip: c.req.header(CLIENT_IP_HEADER) ?? null });
  return c.body(null, 204);
}

/** Mounted at /api/authorized-apps. */
export const authorizedAppsRoutes = new Hono<AuthorizedAppsEnv>().get("/", signedIn, listApps).delete("/:clientId", signedIn, revokeApp);
