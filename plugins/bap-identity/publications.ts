import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import { rowReader } from "../../lib/db/sqlite-values.js";
import { setPublishedIdentity } from "./store.js";
import type { Database } from "../../lib/db/tables.js";

/**
 * Every read and write of the `bapProfileDraft` and `bapPublication` tables (the API's
 * /api/bap/profile routes): a draft is the owner's unpublished profile, saved per identity
 * (saving signs and broadcasts nothing); a publication records a txid the owner broadcast.
 * Profile documents are JSON text here; the routes parse them.
 */

/** The owner's unpublished profile for one identity (at most one per bapId). */
export interface ProfileDraft {
  id: string;
  bapId: string;
  userId: string;
  /** The profile document, JSON text. */
  profile: string;
  createdAt: Date;
  updatedAt: Date;
}

/** A profile the owner published on chain, as they reported it. */
export interface BapPublication {
  id: string;
  bapId: string;
  userId: string;
  txid: string;
  /** The profile document, JSON text. */
  profile: string;
  kind: string | null;
  fundedBy: string | null;
  createdAt: Date;
}


const toDraft = rowReader("bapProfileDraft", ["id", "bapId", "userId", "profile", "createdAt", "updatedAt"]);
const toPublication = rowReader("bapPublication", ["id", "bapId", "userId", "txid", "profile", "kind", "fundedBy", "createdAt"]);

export async function findDraft(db: Kysely<Database>, bapId: string): Promise<ProfileDraft | null> {
  const row = await db.selectFrom("bapProfileDraft").selectAll().where("bapId", "=", bapId).executeTakeFirst();
  return row ? toDraft(row) : null;
}

/** Creates or replaces the draft of `bapId` (the caller has checked the user owns it). */
export async function saveDraft(db: Kysely<Database>, userId: string, bapId: string, profile: string, now = new Date()): Promise<void> {
  await db
    .insertInto("bapProfileDraft")
    .values({ id: randomUUID(), bapId, userId, profile, createdAt: now, updatedAt: now })
    .onConflict((oc) => oc.column("bapId").doUpdateSet({ profile, updatedAt: now }))
    .execute();
}

/** Deletes the user's draft of `bapId`; false when there was none. */
export async function deleteDraft(db: Kysely<Database>, userId: string, bapId: string): Promise<boolean> {
  const deleted = await db.deleteFrom("bapProfileDraft").where("bapId", "=", bapId).where("userId", "=", userId).executeTakeFirst();
  return Number(deleted.numDeletedRows) > 0;
}

/** The most recent publication of `bapId`. */
export async function findLatestPublication(db: Kysely<Database>, bapId: string): Promise<BapPublication | null> {
  const row = await db.selectFrom("bapPublication").selectAll().where("bapId", "=", bapId).orderBy("createdAt", "desc").executeTakeFirst();
  return row ? toPublication(row) : null;
}

/** What POST /api/bap/profile/published records; `identity` is the document's identity part, JSON text. */
export interface PublicationInput {
  bapId: string;
  txid: string;
  profile: string;
  identity: string;
  kind: string | null;
  fundedBy: string | null;
}

/**
 * Records a publication, together: the row, the identity document it put on chain, and the
 * end of the draft it replaces. "txid-taken" (and no change) when that transaction is already
 * recorded, for any identity.
 */
export async function recordPublication(db: Kysely<Database>, userId: string, input: PublicationInput, now = new Date()): Promise<"recorded" | "txid-taken"> {
  return db.transaction().execute(async (trx) => {
    const clash = await trx.selectFrom("bapPublication").select(["bapId"]).where("txid", "=", input.txid).executeTakeFirst();
    if (clash) return "txid-taken" as const;
    const { bapId, txid, profile, kind, fundedBy } = input;
    await trx.insertInto("bapPublication").values({ id: randomUUID(), bapId, userId, txid, profile, kind, fundedBy, createdAt: now }).execute();
    await setPublishedIdentity(trx, bapId, input.identity, now);
    await trx.deleteFrom("bapProfileDraft").where("bapId", "=", bapId).execute();
    return "recorded" as const;
  });
}
