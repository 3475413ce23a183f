import type { Kysely } from "kysely";
import type { Database } from "../../lib/db/tables.js";
import { SEPARATOR, type AnalyticsBatch } from "./counter.js";

/** Every read and write of the `clientDailyCount` and `clientDailyUser` tables (./schema.ts). */

/** Rows per statement: well under SQLite's and PostgreSQL's parameter limits. */
const CHUNK = 200;

function* chunks<T>(items: readonly T[]): Generator<T[]> {
  for (let i = 0; i < items.length; i += CHUNK) yield items.slice(i, i + CHUNK);
}

/**
 * Adds a batch to the tables, keeping only the clients in `known`: each count is an upsert that
 * adds to the row of its (day, client, metric, key), each person an insert that a row already
 * there makes a no-op. In one transaction, so a failed write can be retried whole.
 */
export async function writeAnalyticsBatch(db: Kysely<Database>, batch: AnalyticsBatch, known: ReadonlySet<string>): Promise<void> {
  const counts = [...batch.counts].flatMap(([id, count]) => {
    const [day, clientId, metric, key] = id.split(SEPARATOR) as [string, string, string, string];
    return known.has(clientId) ? [{ id, day, clientId, metric, key, count }] : [];
  });
  const people = [...batch.people].flatMap((id) => {
    const [day, clientId, userId] = id.split(SEPARATOR) as [string, string, string];
    return known.has(clientId) ? [{ id, day, clientId, userId }] : [];
  });
  if (!counts.length && !people.length) return;
  await db.transaction().execute(async (trx) => {
    for (const rows of chunks(counts)) {
      await trx
        .insertInto("clientDailyCount")
        .values(rows)
        .onConflict((oc) => oc.column("id").doUpdateSet((eb) => ({ count: eb("clientDailyCount.count", "+", eb.ref("excluded.count")) })))
        .execute();
    }
    for (const rows of chunks(people)) await trx.insertInto("clientDailyUser").values(rows).onConflict((oc) => oc.column("id").doNothing()).execute();
  });
}

export interface DailyCountRow {
  day: string;
  metric: string;
  key: string;
  count: number;
}

/** The client's counts from `fromDay` on (UTC days, inclusive). */
export async function listDailyCounts(db: Kysely<Database>, clientId: string, fromDay: string): Promise<DailyCountRow[]> {
  const rows = await db.selectFrom("clientDailyCount").select(["day", "metric", "key", "count"]).where("clientId", "=", clientId).where("day", ">=", fromDay).execute();
  return rows.map((r) => ({ day: String(r.day), metric: String(r.metric), key: String(r.key), count: Number(r.count) }));
}

/** How many different people signed in to the client on each day from `fromDay`, and over the whole span. */
export async function countDailyPeople(db: Kysely<Database>, clientId: string, fromDay: string): Promise<{ perDay: Map<string, number>; total: number }> {
  const mine = db.selectFrom("clientDailyUser").where("clientId", "=", clientId).where("day", ">=", fromDay);
  const [days, total] = await Promise.all([
    mine.select((eb) => ["day", eb.fn.countAll<number | string>().as("n")]).groupBy("day").execute(),
    mine.select((eb) => eb.fn.count<number | string>("userId").distinct().as("n")).executeTakeFirst(),
  ]);
  return { perDay: new Map(days.map((d) => [String(d.day), Number(d.n)])), total: Number(total?.n ?? 0) };
}
