import type { Kysely } from "kysely";
import type { Database } from "../../lib/db/tables.js";
import { parseJsonOrNull } from "../../lib/json.js";

/**
 * Every read and write of `oauthAuthorizationDetails` (plugins/authorization-details/schema.ts):
 * the RFC 9396 details granted with an authorization code, found again from the code's
 * stored identifier or from any refresh token of the grant it started.
 */

/** Records the details granted with the code whose stored identifier is `id` (a replayed code records nothing new). */
export async function recordGrantedDetails(db: Kysely<Database>, row: { id: string; userId: string; clientId: string; details: unknown[] }): Promise<void> {
  await db
    .insertInto("oauthAuthorizationDetails")
    .values({ id: row.id, userId: row.userId, clientId: row.clientId, details: JSON.stringify(row.details), createdAt: new Date() })
    .onConflict((oc) => oc.column("id").doNothing())
    .execute();
}

/** The details of the grant a refresh token (its stored form) belongs to; null when it has none. */
export async function grantedDetailsOfRefreshToken(db: Kysely<Database>, storedToken: string): Promise<unknown[] | null> {
  const row = await db
    .selectFrom("oauthRefreshToken as r")
    .innerJoin("oauthAuthorizationDetails as d", "d.id", "r.authorizationCodeId")
    .select("d.details")
    .where("r.token", "=", storedToken)
    .executeTakeFirst();
  const details = row ? parseJsonOrNull(row.details) : null;
  return Array.isArray(details) ? details : null;
}
