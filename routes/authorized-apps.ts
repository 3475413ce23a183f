import { Hono, type Context } from "hono";
import type { Kysely } from "kysely";
import { problems } from "../lib/errors.js";
import type { Logger } from "../lib/logger.js";
import { CLIENT_IP_HEADER } from "../lib/transport.js";
import { recordAuditEvent } from "../plugins/audit/store.js";
import { noStore, signedIn, type RouteDeps, type RouteEnv } from "./middleware.js";

/**
 * The apps a signed-in person has authorized, and revoking one: its consent and every
 * access and refresh token it holds for that person go together. Separate from token
 * revocation (RFC 7009), from ending our session and from signing out of the app.
 */
type AuthorizedAppsEnv = RouteEnv<RouteDeps & { db: Kysely<any>; logger?: Logger }>;

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
export const authorizedAppsRoutes = new Hono<AuthorizedAppsEnv>().use(noStore).get("/", signedIn, listApps).delete("/:clientId", signedIn, revokeApp);

export interface AuthorizedApp {
  clientId: string;
  name: string;
  uri: string | null;
  icon: string | null;
  scopes: string[];
  authorizedAt: string;
  updatedAt: string;
}

/** The apps `userId` has consented to, most recently updated first (also read by the account page). */
export async function listAuthorizedApps(db: Kysely<any>, userId: string): Promise<AuthorizedApp[]> {
  const rows = await db
    .selectFrom("oauthConsent as consent")
    .innerJoin("oauthClient as client", "client.clientId", "consent.clientId")
    .select(["consent.clientId", "consent.scopes", "consent.createdAt", "consent.updatedAt", "client.name", "client.uri", "client.icon"])
    .where("consent.userId", "=", userId)
    .orderBy("consent.updatedAt", "desc")
    .execute();
  return rows.map((r) => ({
    clientId: r.clientId,
    name: r.name ?? r.clientId,
    uri: r.uri ?? null,
    icon: r.icon ?? null,
    scopes: parseScopes(r.scopes),
    authorizedAt: new Date(r.createdAt).toISOString(),
    updatedAt: new Date(r.updatedAt).toISOString(),
  }));
}

/** Removes the consent and every token the app holds for `userId`, together; false when there was no consent. */
export async function revokeAuthorizedApp(db: Kysely<any>, userId: string, clientId: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const consent = await trx.deleteFrom("oauthConsent").where("userId", "=", userId).where("clientId", "=", clientId).executeTakeFirst();
    await trx.deleteFrom("oauthAccessToken").where("userId", "=", userId).where("clientId", "=", clientId).execute();
    await trx.deleteFrom("oauthRefreshToken").where("userId", "=", userId).where("clientId", "=", clientId).execute();
    return Number(consent.numDeletedRows) > 0;
  });
}

function parseScopes(raw: unknown): string[] {
  if (Array.isArray(raw)) return raw.map(String);
  if (typeof raw !== "string") return [];
  try {
    const parsed = JSON.parse(raw);
    return Array.isArray(parsed) ? parsed.map(String) : raw.split(" ");
  } catch {
    return raw.split(" ").filter(Boolean);
  }
}
