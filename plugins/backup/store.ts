import { randomUUID } from "node:crypto";
import { sql, type Kysely } from "kysely";
import type { BapIdentity } from "../bap-identity/store.js";
import type { Database } from "../../lib/db/tables.js";
import { findUserIdByPubkey as userIdByPubkey } from "../core-store/users.js";

/**
 * Queries of the backup tables (plugins/backup/schema.ts). Each takes `db` first; lookups
 * return `T | null`. Dates are written as Dates (lib/db/sqlite-values.ts stores them on SQLite as better-auth
 * does) and read back as ISO strings through `iso()`.
 */

/** The spec's "Backup record". */
export interface BackupRecord {
  bapId: string;
  backup: string;
  lastUpdated: string;
  generation: number;
}

export interface BackupMeta {
  bapId: string;
  lastUpdated: string;
  generation: number;
}

export type BapIdentityRef = Pick<BapIdentity, "bapId" | "userId" | "memberPubkey">;

export interface RecoveryLink {
  provider: string;
  accountId: string;
  bapId: string;
  userId: string;
  linkedAt: string;
}

const iso = (value: unknown): string => new Date(value as string | Date).toISOString();

export async function findBackup(db: Kysely<Database>, bapId: string): Promise<BackupRecord | null> {
  const row = await db.selectFrom("bapBackup").select(["bapId", "backup", "lastUpdated", "generation"]).where("bapId", "=", bapId).executeTakeFirst();
  return row ? { bapId: row.bapId, backup: row.backup, lastUpdated: iso(row.lastUpdated), generation: Number(row.generation) } : null;
}

/** The record without its (possibly megabytes of) ciphertext. */
export async function findBackupMeta(db: Kysely<Database>, bapId: string): Promise<BackupMeta | null> {
  const row = await db.selectFrom("bapBackup").select(["bapId", "lastUpdated", "generation"]).where("bapId", "=", bapId).executeTakeFirst();
  return row ? { bapId: row.bapId, lastUpdated: iso(row.lastUpdated), generation: Number(row.generation) } : null;
}

/**
 * The value `previousBackup` takes on a replacing write: the ciphertext being replaced, unless
 * the write repeats it (a retried sync), which would otherwise push out the one older copy.
 */
const keepReplaced = sql<string | null>`CASE WHEN ${sql.ref("bapBackup.backup")} = ${sql.ref("excluded.backup")} THEN ${sql.ref("bapBackup.previousBackup")} ELSE ${sql.ref("bapBackup.backup")} END`;

interface BackupWrite {
  bapId: string;
  userId: string;
  backup: string;
}

/**
 * POST /api/backup: insert with generation 1, or replace and add one to the generation.
 * One `INSERT ... ON CONFLICT (bapId) DO UPDATE SET generation = generation + 1` statement:
 * on PostgreSQL the conflicting row is locked for the update and a concurrent insert of the
 * same bapId waits on the unique index and then updates; SQLite has a single writer. Either
 * way concurrent writes serialise, so no update is lost and no generation number is skipped
 * or repeated. The transaction makes the write all-or-nothing: a crash mid-write leaves the
 * previous backup as it was. The replaced ciphertext moves to `previousBackup` in the same
 * statement (SET expressions read the row as it was before the update, in both databases).
 */
export function storeBackup(db: Kysely<Database>, input: BackupWrite): Promise<number> {
  return upsertBackup(db, input, { firstGeneration: 1, bumpGeneration: true });
}

/**
 * POST /api/backup/sync: the same upsert without touching `generation` (a new record starts
 * at 0: it has never been written through POST /api/backup).
 */
export function syncBackup(db: Kysely<Database>, input: BackupWrite): Promise<number> {
  return upsertBackup(db, input, { firstGeneration: 0, bumpGeneration: false });
}

async function upsertBackup(db: Kysely<Database>, input: BackupWrite, { firstGeneration, bumpGeneration }: { firstGeneration: number; bumpGeneration: boolean }): Promise<number> {
  const now = new Date();
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .insertInto("bapBackup")
      .values({ id: randomUUID(), bapId: input.bapId, userId: input.userId, backup: input.backup, generation: firstGeneration, lastUpdated: now, createdAt: now })
      .onConflict((oc) =>
        oc.column("bapId").doUpdateSet({
          backup: sql.ref("excluded.backup"),
          previousBackup: keepReplaced,
          userId: sql.ref("excluded.userId"),
          lastUpdated: sql.ref("excluded.lastUpdated"),
          ...(bumpGeneration ? { generation: sql`${sql.ref("bapBackup.generation")} + 1` } : {}),
        }),
      )
      .returning("generation")
      .executeTakeFirstOrThrow();
    return Number(row.generation);
  });
}

/** Identities are the identity store's (plugins/bap-identity/store.ts); backups read them through it. */
export { findIdentity, findOwnedIdentity, findPrimaryIdentity } from "../bap-identity/store.js";

/** An account whose key is `pubkey` (set by key sign-up), for identities with no registration record yet. */
export async function findUserIdByPubkey(db: Kysely<Database>, pubkey: string): Promise<string | null> {
  return (await userIdByPubkey(db, pubkey)) ?? null;
}

/** Linked accounts are better-auth's `account` table, read through its owner (plugins/core-store). */
export { hasLinkedAccount } from "../core-store/accounts.js";

const providerAccountKey = (provider: string, accountId: string) => `${provider}|${accountId}`;

const toLink = (row: Record<string, unknown>): RecoveryLink => ({
  provider: String(row.provider),
  accountId: String(row.accountId),
  bapId: String(row.bapId),
  userId: String(row.userId),
  linkedAt: iso(row.createdAt),
});

export async function findRecoveryLink(db: Kysely<Database>, provider: string, accountId: string): Promise<RecoveryLink | null> {
  const row = await db
    .selectFrom("backupRecoveryLink")
    .select(["provider", "accountId", "bapId", "userId", "createdAt"])
    .where("providerAccount", "=", providerAccountKey(provider, accountId))
    .executeTakeFirst();
  return row ? toLink(row) : null;
}

export async function listRecoveryLinks(db: Kysely<Database>, bapId: string): Promise<RecoveryLink[]> {
  const rows = await db
    .selectFrom("backupRecoveryLink")
    .select(["provider", "accountId", "bapId", "userId", "createdAt"])
    .where("bapId", "=", bapId)
    .orderBy("createdAt", "asc")
    .execute();
  return rows.map(toLink);
}

/**
 * Records `provider|accountId -> bapId` unless that provider account already has a mapping.
 * `ON CONFLICT DO NOTHING` on the unique key, then a read: two racing links to different
 * identities cannot both win. Returns the mapping now stored, whoever wrote it.
 */
export async function linkRecoveryAccount(
  db: Kysely<Database>,
  input: { provider: string; accountId: string; bapId: string; userId: string },
): Promise<RecoveryLink> {
  const key = providerAccountKey(input.provider, input.accountId);
  await db
    .insertInto("backupRecoveryLink")
    .values({ id: randomUUID(), providerAccount: key, ...input, createdAt: new Date() })
    .onConflict((oc) => oc.column("providerAccount").doNothing())
    .execute();
  const stored = await findRecoveryLink(db, input.provider, input.accountId);
  if (!stored) throw new Error("recovery link vanished after insert");
  return stored;
}
