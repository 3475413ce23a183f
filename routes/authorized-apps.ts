import { Hono } from "hono";
import type { Kysely } from "kysely";
import type { Auth } from "../auth.config.js";
import { problems } from "../lib/errors.js";
import { requireSession } from "../lib/session.js";

/**
 * The apps a signed-in person has authorized, and revoking one: its consent and every
 * access and refresh token it holds for that person go together. Separate from token
 * revocation (RFC 7009), from ending our session and from signing out of the app.
 */
export function authorizedAppsRoutes({ auth, db }: { auth: Auth; db: Kysely<any> }) {
  return new Hono()
    .get("/", async (c) => {
      const { user } = await requireSession(auth, c.req.raw.headers);
      const rows = await db
        .selectFrom("oauthConsent as consent")
        .innerJoin("oauthClient as client", "client.clientId", "consent.clientId")
        .select(["consent.clientId", "consent.scopes", "consent.createdAt", "consent.updatedAt", "client.name", "client.uri", "client.icon"])
        .where("consent.userId", "=", user.id)
        .orderBy("consent.updatedAt", "desc")
        .execute();
      const apps = rows.map((r) => ({
        clientId: r.clientId,
        name: r.name ?? r.clientId,
        uri: r.uri ?? null,
        icon: r.icon ?? null,
        scopes: parseScopes(r.scopes),
        authorizedAt: new Date(r.createdAt).toISOString(),
        updatedAt: new Date(r.updatedAt).toISOString(),
      }));
      return c.json({ apps }, 200, { "cache-control": "no-store" });
    })
    .delete("/:clientId", async (c) => {
      const { user } = await requireSession(auth, c.req.raw.headers);
      const clientId = c.req.param("clientId");
      const removed = await db.transaction().execute(async (trx) => {
        const consent = await trx.deleteFrom("oauthConsent").where("userId", "=", user.id).where("clientId", "=", clientId).executeTakeFirst();
        await trx.deleteFrom("oauthAccessToken").where("userId", "=", user.id).where("clientId", "=", clientId).execute();
        await trx.deleteFrom("oauthRefreshToken").where("userId", "=", user.id).where("clientId", "=", clientId).execute();
        return Number(consent.numDeletedRows);
      });
      if (!removed) throw problems.notFound("You have not authorized that application.");
      return c.body(null, 204);
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
