import type { Kysely } from "kysely";
import type { Database } from "../../lib/db/tables.js";
import { revokeExchangesOfGrant, revokeUserExchanges } from "./exchanges.js";

/**
 * oauth-provider's grants as our code reads and ends them: consents (`oauthConsent`) and the
 * tokens issued under them (`oauthAccessToken`, `oauthRefreshToken`). oauth-provider writes
 * these tables itself; everything else of ours (the authorized-apps route, the account page,
 * the MCP tools, e-mail and password changes, the admin CLI) goes through this module.
 */

export interface AuthorizedApp {
  clientId: string;
  name: string;
  uri: string | null;
  icon: string | null;
  scopes: string[];
  authorizedAt: string;
  updatedAt: string;
}

/** The apps `userId` has consented to, most recently updated first. */
export async function listAuthorizedApps(db: Kysely<Database>, userId: string): Promise<AuthorizedApp[]> {
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
export async function revokeAuthorizedApp(db: Kysely<Database>, userId: string, clientId: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const consent = await trx.deleteFrom("oauthConsent").where("userId", "=", userId).where("clientId", "=", clientId).executeTakeFirst();
    await trx.deleteFrom("oauthAccessToken").where("userId", "=", userId).where("clientId", "=", clientId).execute();
    await trx.deleteFrom("oauthRefreshToken").where("userId", "=", userId).where("clientId", "=", clientId).execute();
    // RFC 8693 delegated tokens exchanged from this grant end with it, whichever agent holds them.
    await revokeExchangesOfGrant(trx, userId, clientId);
    return Number(consent.numDeletedRows) > 0;
  });
}

/**
 * Deletes every OAuth access and refresh token issued for `userId`, so an `offline_access`
 * grant does not outlive a password reset or an undone e-mail change (OWASP ASVS 5.0 V7.4.3:
 * after a credential change, the other ways in end too). Consents stay: apps may ask again, and
 * the account page still lists them. Signed JWT access tokens are not stored and run to their
 * expiry (ACCESS_TOKEN_TTL), except delegated ones (token exchange), whose records go too.
 */
export async function revokeUserOAuthTokens(db: Kysely<Database>, userId: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom("oauthAccessToken").where("userId", "=", userId).execute();
    await trx.deleteFrom("oauthRefreshToken").where("userId", "=", userId).execute();
    await revokeUserExchanges(trx, userId);
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

/**
 * The people who hold a grant of the client now: a consent, or a refresh token that is neither
 * revoked nor expired (a client that skips consent has only the latter). Each person once.
 */
export async function countActiveGrants(db: Kysely<Database>, clientId: string, now = new Date()): Promise<number> {
  const holders = db
    .selectFrom("oauthConsent")
    .select("userId")
    .where("clientId", "=", clientId)
    .where("userId", "is not", null)
    .union(db.selectFrom("oauthRefreshToken").select("userId").where("clientId", "=", clientId).where("revoked", "is", null).where("expiresAt", ">", now));
  const row = await db.selectFrom(holders.as("holders")).select((eb) => eb.fn.countAll<number | string>().as("n")).executeTakeFirst();
  return Number(row?.n ?? 0);
}
