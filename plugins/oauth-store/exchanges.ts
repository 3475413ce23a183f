import type { Kysely } from "kysely";
import type { Database } from "../../lib/db/tables.js";

/**
 * Every read and write of the `oauthTokenExchange` table (plugins/token-exchange/schema.ts): a
 * delegated token is active while its row exists and has not expired; ending the person's grant
 * to an app deletes the rows of every token exchanged from it, at any depth (each row names the
 * grant's app).
 */

export interface ExchangeRecord {
  /** The token's `jti`. */
  id: string;
  userId: string;
  agentClientId: string;
  grantClientId: string;
  expiresAt: Date;
}

/** Records a delegated token; the person's expired records go at the same time (they count for nothing). */
export async function recordExchange(db: Kysely<Database>, record: ExchangeRecord): Promise<void> {
  const now = new Date();
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom("oauthTokenExchange").where("userId", "=", record.userId).where("expiresAt", "<=", now).execute();
    await trx.insertInto("oauthTokenExchange").values({ ...record, createdAt: now }).execute();
  });
}

/** The row of a delegated token still in force, by its `jti`; null once revoked or expired. */
export async function findActiveExchange(db: Kysely<Database>, id: string): Promise<ExchangeRecord | null> {
  const row = await db
    .selectFrom("oauthTokenExchange")
    .select(["id", "userId", "agentClientId", "grantClientId", "expiresAt"])
    .where("id", "=", id)
    .where("expiresAt", ">", new Date())
    .executeTakeFirst();
  return row ? { ...row, expiresAt: new Date(row.expiresAt) } : null;
}

/** Ends every delegated token that came from `userId`'s grant to `grantClientId`. */
export async function revokeExchangesOfGrant(db: Kysely<Database>, userId: string, grantClientId: string): Promise<void> {
  await db.deleteFrom("oauthTokenExchange").where("userId", "=", userId).where("grantClientId", "=", grantClientId).execute();
}

/** Ends every delegated token issued for `userId` (a credential change, plugins/oauth-store/grants.ts). */
export async function revokeUserExchanges(db: Kysely<Database>, userId: string): Promise<void> {
  await db.deleteFrom("oauthTokenExchange").where("userId", "=", userId).execute();
}

/** Ends the delegated tokens `agentClientId` holds from `userId`'s grant to `grantClientId` (the account page). */
export async function revokeAgentExchanges(db: Kysely<Database>, userId: string, grantClientId: string, agentClientId: string): Promise<boolean> {
  const result = await db
    .deleteFrom("oauthTokenExchange")
    .where("userId", "=", userId)
    .where("grantClientId", "=", grantClientId)
    .where("agentClientId", "=", agentClientId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** An agent (a client) acting for a person through delegated tokens. */
export interface ActingAgent {
  clientId: string;
  name: string;
}

/** The agents acting for `userId` through delegated tokens still in force, per app (grantClientId). */
export async function listActingAgents(db: Kysely<Database>, userId: string): Promise<Map<string, ActingAgent[]>> {
  const rows = await db
    .selectFrom("oauthTokenExchange as exchange")
    .leftJoin("oauthClient as client", "client.clientId", "exchange.agentClientId")
    .select(["exchange.grantClientId", "exchange.agentClientId", "client.name"])
    .distinct()
    .where("exchange.userId", "=", userId)
    .where("exchange.expiresAt", ">", new Date())
    .orderBy("exchange.agentClientId")
    .execute();
  const byApp = new Map<string, ActingAgent[]>();
  for (const row of rows) {
    byApp.set(row.grantClientId, [...(byApp.get(row.grantClientId) ?? []), { clientId: row.agentClientId, name: row.name ?? row.agentClientId }]);
  }
  return byApp;
}
