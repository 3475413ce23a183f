import type { Kysely } from "kysely";
import { asDate } from "../../lib/db/sqlite-values.js";
import type { Database } from "../../lib/db/tables.js";

/**
 * better-auth's `account` table (a person's password and linked provider accounts) as our code
 * reads it outside a better-auth request (its one owner here; adapter.ts is the same inside
 * one). Linking and unlinking go through better-auth's endpoints.
 */

export interface LinkedAccount {
  id: string;
  providerId: string;
  accountId: string;
  createdAt: Date;
  hasPassword: boolean;
}

/** A person's accounts, oldest first (the account page, certificate eligibility). */
export async function listLinkedAccounts(db: Kysely<Database>, userId: string): Promise<LinkedAccount[]> {
  const rows = await db.selectFrom("account").select(["id", "providerId", "accountId", "createdAt", "password"]).where("userId", "=", userId).orderBy("createdAt", "asc").execute();
  return rows.map((r) => ({ id: r.id, providerId: r.providerId, accountId: r.accountId, createdAt: asDate(r.createdAt), hasPassword: Boolean(r.password) }));
}

/** Whether the user has signed in with `provider` as `accountId`. */
export async function hasLinkedAccount(db: Kysely<Database>, userId: string, provider: string, accountId: string): Promise<boolean> {
  const row = await db
    .selectFrom("account")
    .select("id")
    .where("userId", "=", userId)
    .where("providerId", "=", provider)
    .where("accountId", "=", accountId)
    .executeTakeFirst();
  return Boolean(row);
}
