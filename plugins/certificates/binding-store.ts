import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import { rowReader } from "../../lib/db/sqlite-values.js";
import type { Database } from "../../lib/db/tables.js";

/**
 * Every read and write of `bapWalletBinding`: which wallet identity key a BAP identity's owner
 * proved control of (spec "bapWalletBinding": bapId, verifiedAt). One row per identity; a new
 * challenge replaces the open one, and a verified binding stays verified until revoked or
 * replaced by another verified key.
 */
export interface WalletBinding {
  bapId: string;
  userId: string;
  identityKey: string;
  challenge: string | null;
  challengeExpiresAt: Date | null;
  verifiedAt: Date | null;
}

const toBinding = rowReader("bapWalletBinding", ["bapId", "userId", "identityKey", "challenge", "challengeExpiresAt", "verifiedAt"]);

export async function findBinding(db: Kysely<Database>, bapId: string): Promise<WalletBinding | null> {
  const row = await db.selectFrom("bapWalletBinding").selectAll().where("bapId", "=", bapId).executeTakeFirst();
  return row ? toBinding(row) : null;
}

/** The verified bindings of a wallet identity key. */
export async function listVerifiedBindingsOfKey(db: Kysely<Database>, identityKey: string): Promise<WalletBinding[]> {
  const rows = await db.selectFrom("bapWalletBinding").selectAll().where("identityKey", "=", identityKey).where("verifiedAt", "is not", null).orderBy("bapId").execute();
  return rows.map(toBinding);
}

/**
 * Opens a challenge for `identityKey` on the user's identity (stored as `<key> <message>`). A
 * verified binding keeps its key and verifiedAt until the new challenge is signed, so asking
 * is not revoking.
 */
export async function openChallenge(db: Kysely<Database>, userId: string, bapId: string, identityKey: string, message: string, expiresAt: Date): Promise<void> {
  const challenge = `${identityKey} ${message}`;
  const existing = await findBinding(db, bapId);
  if (!existing) {
    await db.insertInto("bapWalletBinding").values({ id: randomUUID(), bapId, userId, identityKey, challenge, challengeExpiresAt: expiresAt, verifiedAt: null }).execute();
    return;
  }
  const unverifiedKey = existing.verifiedAt ? {} : { identityKey };
  await db.updateTable("bapWalletBinding").set({ userId, challenge, challengeExpiresAt: expiresAt, ...unverifiedKey }).where("bapId", "=", bapId).execute();
}

/** The open challenge: the key it is for and the message that key signs. */
export function openChallengeOf(binding: WalletBinding): { identityKey: string; message: string } | null {
  if (!binding.challenge) return null;
  const space = binding.challenge.indexOf(" ");
  return { identityKey: binding.challenge.slice(0, space), message: binding.challenge.slice(space + 1) };
}

/** Uses up the challenge (whatever the outcome) and, when `verified`, binds its key; false when it was already used. */
export async function closeChallenge(db: Kysely<Database>, bapId: string, storedChallenge: string, verified: { identityKey: string; at: Date } | null): Promise<boolean> {
  const result = await db
    .updateTable("bapWalletBinding")
    .set({ challenge: null, challengeExpiresAt: null, ...(verified ? { identityKey: verified.identityKey, verifiedAt: verified.at } : {}) })
    .where("bapId", "=", bapId)
    .where("challenge", "=", storedChallenge)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function revokeBinding(db: Kysely<Database>, userId: string, bapId: string): Promise<boolean> {
  const result = await db.deleteFrom("bapWalletBinding").where("bapId", "=", bapId).where("userId", "=", userId).where("verifiedAt", "is not", null).executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}
