import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Kysely } from "kysely";
import { asDate } from "../../lib/db/sqlite-values.js";
import type { Database } from "../../lib/db/tables.js";

/**
 * Every read and write of the `jobLease` table: a background job that several instances share
 * a database for runs in one of them at a time. Taking a lease is one statement (an upsert
 * whose update applies only to an expired lease or the holder's own), so of instances asking
 * together exactly one gets it, on SQLite and on PostgreSQL alike, with or without Redis.
 */

/** A name for this process as a lease holder: readable in the table, unique per start. */
export function leaseHolder(): string {
  return `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
}

/**
 * Takes the lease `job` for `holder` for `ttlMs`, or extends it when `holder` has it already.
 * True when `holder` holds it now; false when another holder's lease has not yet expired.
 */
export async function takeLease(db: Kysely<Database>, job: string, holder: string, ttlMs: number): Promise<boolean> {
  const now = new Date();
  const until = new Date(now.getTime() + ttlMs);
  const row = await db
    .insertInto("jobLease")
    .values({ id: job, holder, expiresAt: until })
    .onConflict((conflict) =>
      conflict
        .column("id")
        .doUpdateSet({ holder, expiresAt: until })
        .where((eb) => eb.or([eb("jobLease.expiresAt", "<=", now), eb("jobLease.holder", "=", holder)])),
    )
    .returning("holder")
    .executeTakeFirst();
  return row?.holder === holder;
}

/** Gives the lease up (a stopping instance), so another may take it at its next round. */
export async function releaseLease(db: Kysely<Database>, job: string, holder: string): Promise<void> {
  await db.deleteFrom("jobLease").where("id", "=", job).where("holder", "=", holder).execute();
}

/** Who holds `job` and until when, or null. */
export async function findLease(db: Kysely<Database>, job: string): Promise<{ holder: string; expiresAt: Date } | null> {
  const row = await db.selectFrom("jobLease").select(["holder", "expiresAt"]).where("id", "=", job).executeTakeFirst();
  return row ? { holder: String(row.holder), expiresAt: asDate(row.expiresAt) } : null;
}
