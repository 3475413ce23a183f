import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import type { Database } from "../../lib/db/tables.js";

/** Every read and write of `stripeEvent`: the ids of the Stripe events already handled. */
export async function isEventProcessed(db: Kysely<Database>, eventId: string): Promise<boolean> {
  return Boolean(await db.selectFrom("stripeEvent").select("id").where("eventId", "=", eventId).executeTakeFirst());
}

/**
 * Records the event as handled. Done first inside the transaction that applies it: a second
 * delivery racing the first fails here on the unique `eventId` and its transaction changes nothing.
 */
export async function recordEvent(db: Kysely<Database>, eventId: string, type: string): Promise<void> {
  await db.insertInto("stripeEvent").values({ id: randomUUID(), eventId, type, createdAt: new Date() }).execute();
}
