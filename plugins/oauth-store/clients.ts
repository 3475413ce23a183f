import type { Kysely } from "kysely";
import { rowReader } from "../../lib/db/sqlite-values.js";
import type { Database } from "../../lib/db/tables.js";
import { forgetRequestReads } from "../core-store/request-reads.js";

/**
 * oauth-provider's registered clients (`oauthClient`) and their RFC 8707 allow-lists
 * (`oauthClientResource`, `oauthResource`) as our pages and the admin CLI read and change them.
 * Registration itself stays oauth-provider's (with our hooks in plugins/registration-*).
 */

/** What a page shows of a client: its name, home page and icon as registered; null when unknown. */
export async function findClientDisplay(db: Kysely<Database>, clientId: string): Promise<{ name: string | null; uri: string | null; icon: string | null } | null> {
  const row = await db.selectFrom("oauthClient").select(["name", "uri", "icon"]).where("clientId", "=", clientId).executeTakeFirst();
  return row ? { name: row.name ?? null, uri: row.uri ?? null, icon: row.icon ?? null } : null;
}

export interface ClientSummary {
  clientId: string;
  name: string | null;
  disabled: boolean;
  public: boolean;
  userId: string | null;
  createdAt: Date | null;
}

const toClient = rowReader("oauthClient", ["clientId", "name", "disabled", "public", "userId", "createdAt"]);

/** Every registered client, oldest first. */
export async function listClients(db: Kysely<Database>): Promise<ClientSummary[]> {
  const rows = await db.selectFrom("oauthClient").select(["clientId", "name", "disabled", "public", "userId", "createdAt"]).orderBy("createdAt", "asc").execute();
  // oauth-provider leaves `disabled` and `public` NULL on a client registered without them: neither.
  return rows.map(toClient).map((c) => ({ ...c, disabled: c.disabled ?? false, public: c.public ?? false }));
}

/** Disables or enables a client; false when there is no such client. */
export async function setClientDisabled(db: Kysely<Database>, clientId: string, disabled: boolean): Promise<boolean> {
  const result = await db.updateTable("oauthClient").set({ disabled, updatedAt: new Date() }).where("clientId", "=", clientId).executeTakeFirst();
  await forgetRequestReads();
  return Number(result.numUpdatedRows) > 0;
}

/** A client's RFC 8707 allow-list: the resources it may ask for (empty: no list). */
export async function clientResourceIds(db: Kysely<Database>, clientId: string): Promise<string[]> {
  const links = await db.selectFrom("oauthClientResource").select("resourceId").where("clientId", "=", clientId).execute();
  return links.map((l) => l.resourceId);
}

/** The ids of anonymous clients (no owning user or reference), as a subquery for another table's query. */
export function anonymousClientIds(db: Kysely<Database>) {
  return db.selectFrom("oauthClient").select("clientId").where("userId", "is", null).where("referenceId", "is", null);
}

/** Deletes those of `clientIds` that are anonymous; their tokens and consents go with them (foreign keys). */
export async function deleteAnonymousClients(db: Kysely<Database>, clientIds: readonly string[]): Promise<void> {
  if (!clientIds.length) return;
  await db.deleteFrom("oauthClient").where("clientId", "in", clientIds).where("userId", "is", null).where("referenceId", "is", null).execute();
  await forgetRequestReads();
}

/** Whether `userId` owns the client `clientId` (its public client_id). */
export async function isClientOwnedBy(db: Kysely<Database>, clientId: string, userId: string): Promise<boolean> {
  return Boolean(await db.selectFrom("oauthClient").select("id").where("clientId", "=", clientId).where("userId", "=", userId).executeTakeFirst());
}

/** The owner of the client `clientId` (none when anonymous or unknown), as a subquery for another table's query. */
export function clientOwnerIds(db: Kysely<Database>, clientId: string) {
  return db.selectFrom("oauthClient").select("userId").where("clientId", "=", clientId).where("userId", "is not", null);
}

export async function clientExists(db: Kysely<Database>, clientId: string): Promise<boolean> {
  return Boolean(await db.selectFrom("oauthClient").select("clientId").where("clientId", "=", clientId).executeTakeFirst());
}

/**
 * Replaces a client's RFC 8707 allow-list (each resource made an `oauthResource` row if it is
 * not one yet); an empty list clears it (any https resource the person consents to).
 */
export async function replaceClientResources(db: Kysely<Database>, clientId: string, resources: Iterable<string>): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom("oauthClientResource").where("clientId", "=", clientId).execute();
    const now = new Date();
    for (const resource of new Set(resources)) {
      const known = await trx.selectFrom("oauthResource").select("identifier").where("identifier", "=", resource).executeTakeFirst();
      if (!known) {
        await trx.insertInto("oauthResource").values({ id: crypto.randomUUID(), identifier: resource, name: new URL(resource).host, disabled: false, dpopBoundAccessTokensRequired: false, policyVersion: 1, createdAt: now, updatedAt: now }).execute();
      }
      await trx.insertInto("oauthClientResource").values({ id: crypto.randomUUID(), clientId, resourceId: resource, createdAt: now }).execute();
    }
  });
}

/** A client's allow-list, sorted; empty when it may ask for any https resource. */
export async function listClientResources(db: Kysely<Database>, clientId: string): Promise<string[]> {
  const rows = await db.selectFrom("oauthClientResource").select("resourceId").where("clientId", "=", clientId).orderBy("resourceId").execute();
  return rows.map((r) => String(r.resourceId));
}

/**
 * Forgets spent private_key_jwt assertions (`oauthClientAssertion`, oauth-provider's single-use
 * `jti` record) that expired before `cutoff`: an expired assertion is refused for its `exp`
 * before its `jti` is looked at (RFC 7523 §3), so its record no longer guards anything. At most
 * `limit` per call; answers how many were deleted.
 */
export async function deleteExpiredClientAssertions(db: Kysely<Database>, cutoff: Date, limit = 1000): Promise<number> {
  const expired = db.selectFrom("oauthClientAssertion").select("id").where("expiresAt", "<", cutoff).limit(limit);
  const result = await db.deleteFrom("oauthClientAssertion").where("id", "in", expired).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Those of `clientIds` that name a registered client (analytics drops counts for the others). */
export async function existingClientIds(db: Kysely<Database>, clientIds: readonly string[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (let i = 0; i < clientIds.length; i += 500) {
    const rows = await db.selectFrom("oauthClient").select("clientId").where("clientId", "in", clientIds.slice(i, i + 500)).execute();
    for (const row of rows) found.add(row.clientId);
  }
  return found;
}

/** The clients `userId` owns, by name then client_id (the account page's analytics picker). */
export async function listOwnedClients(db: Kysely<Database>, userId: string): Promise<Array<{ clientId: string; name: string }>> {
  const rows = await db.selectFrom("oauthClient").select(["clientId", "name"]).where("userId", "=", userId).orderBy("createdAt", "asc").orderBy("clientId").execute();
  return rows.map((r) => ({ clientId: r.clientId, name: r.name ?? r.clientId }));
}

/** The user who owns the client `clientId` (registered while signed in); null when anonymous or unknown. */
export async function findClientOwner(db: Kysely<Database>, clientId: string): Promise<string | null> {
  const row = await db.selectFrom("oauthClient").select("userId").where("clientId", "=", clientId).executeTakeFirst();
  return row?.userId ?? null;
}
