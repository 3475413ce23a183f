import type { Kysely } from "kysely";
import { asDate, rowReader } from "../../lib/db/sqlite-values.js";
import type { Database } from "../../lib/db/tables.js";

/**
 * better-auth's `session` table as our code reads and changes it outside a better-auth request
 * (its one owner here; adapter.ts is the same inside one). better-auth creates and deletes
 * sessions itself: revocations still go through its internal adapter, so a session kept in
 * secondary storage goes too.
 */

export interface SessionRow {
  id: string;
  createdAt: Date;
  updatedAt: Date;
  expiresAt: Date;
  ipAddress: string | null;
  userAgent: string | null;
}

/** A person's sessions not yet expired, most recently updated first (the account page). */
export async function listActiveSessions(db: Kysely<Database>, userId: string): Promise<SessionRow[]> {
  const rows = await db
    .selectFrom("session")
    .select(["id", "createdAt", "updatedAt", "expiresAt", "ipAddress", "userAgent"])
    .where("userId", "=", userId)
    .orderBy("updatedAt", "desc")
    .execute();
  const now = Date.now();
  return rows
    .map((r) => ({ id: r.id, createdAt: asDate(r.createdAt), updatedAt: asDate(r.updatedAt), expiresAt: asDate(r.expiresAt), ipAddress: r.ipAddress ?? null, userAgent: r.userAgent ?? null }))
    .filter((s) => s.expiresAt.getTime() > now);
}

const toStoredSession = rowReader("session", ["id", "createdAt", "expiresAt", "ipAddress", "userAgent"]);

export type StoredSession = ReturnType<typeof toStoredSession>;

/** Every stored session of a person, expired or not, oldest first (the admin CLI). */
export async function listStoredSessions(db: Kysely<Database>, userId: string): Promise<StoredSession[]> {
  const rows = await db.selectFrom("session").select(["id", "createdAt", "expiresAt", "ipAddress", "userAgent"]).where("userId", "=", userId).orderBy("createdAt", "asc").execute();
  return rows.map(toStoredSession);
}

/** The token of the session `sessionId` when it is `userId`'s, else null. */
export async function findSessionToken(db: Kysely<Database>, userId: string, sessionId: string): Promise<string | null> {
  const row = await db.selectFrom("session").select("token").where("id", "=", sessionId).where("userId", "=", userId).executeTakeFirst();
  return row ? row.token : null;
}

/** Sets the tier every session of a person carries (plugins/subscriptions keeps it in step with the user's). */
export async function setSessionsTier(db: Kysely<Database>, userId: string, tier: string): Promise<void> {
  await db.updateTable("session").set({ subscriptionTier: tier }).where("userId", "=", userId).execute();
}
