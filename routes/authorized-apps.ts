import { Hono } from "hono";
import type { Kysely } from "kysely";
import type { Auth } from "../auth.config.js";
import { problems } from "../lib/errors.js";
import { requireSession } from "./session.js";

/**
 * The apps a signed-in person has authorized, and revoking one: its consent and every
 * access and refresh token it holds for that person go together. Separate from token
 * revocation (RFC 7009), from ending our session and from signing out of the app.
 */
export function authorizedAppsRoutes({ auth, db }: { auth: Auth; db: Kysely<any> }) {
  return new Hono()
    .get("/", async (c) => {
      const { user } = await requireSession(auth, c.req.raw.headers);
      return c.json({ apps: await listAuthorizedApps(db, user.id) }, 200, { "cache-control": "no-store" });
    })
    .delete("/:clientId", async (c) => {
      const { user } = await requireSession(auth, c.req.raw.headers);
      const removed = await revokeAuthorizedApp(db, user.id, c.req.param("clientId"));
      if (!removed) throw problems.notFound("You have not authorized that application.");
      return c.body(null, 204);
    });
}

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
