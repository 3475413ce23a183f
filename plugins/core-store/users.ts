import type { Kysely } from "kysely";
import { asBool } from "../../lib/db/sqlite-values.js";
import type { Database } from "../../lib/db/tables.js";
import { forgetRequestReads } from "./request-reads.js";

/**
 * better-auth's `user` table as our code reads and changes it outside better-auth's endpoints
 * (its one owner here): the few fields our plugins keep on it (the account's BAP `pubkey`, the
 * cached `subscriptionTier`) and lookups by a unique field.
 */

/** Whether the user turned two-factor on (a verified authenticator); backup codes are stored encrypted and not counted. */
export async function findTwoFactorEnabled(db: Kysely<Database>, userId: string): Promise<boolean> {
  const user = await db.selectFrom("user").select(["twoFactorEnabled"]).where("id", "=", userId).executeTakeFirst();
  return asBool(user?.twoFactorEnabled);
}

/** The user with this e-mail address (stored lower-case by better-auth), if any. */
export async function findUserIdByEmail(db: Kysely<Database>, email: string): Promise<string | undefined> {
  return (await db.selectFrom("user").select("id").where("email", "=", email).executeTakeFirst())?.id;
}

/** The user whose account key is `pubkey`, if any. */
export async function findUserIdByPubkey(db: Kysely<Database>, pubkey: string): Promise<string | undefined> {
  return (await db.selectFrom("user").select("id").where("pubkey", "=", pubkey).executeTakeFirst())?.id;
}

/** Sets (or clears) the account's BAP public key. */
export async function setUserPubkey(db: Kysely<Database>, userId: string, pubkey: string | null): Promise<void> {
  await db.updateTable("user").set({ pubkey }).where("id", "=", userId).execute();
  await forgetRequestReads();
}

/** The tier last recorded on the user's row (the subscriptions plugin keeps it current); undefined without a row. */
export async function findRecordedTier(db: Kysely<Database>, userId: string): Promise<string | null | undefined> {
  return (await db.selectFrom("user").select("subscriptionTier").where("id", "=", userId).executeTakeFirst())?.subscriptionTier;
}

/** Records the user's current tier. */
export async function setRecordedTier(db: Kysely<Database>, userId: string, tier: string): Promise<void> {
  await db.updateTable("user").set({ subscriptionTier: tier }).where("id", "=", userId).execute();
  await forgetRequestReads();
}
