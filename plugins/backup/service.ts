import type { Kysely } from "kysely";
import * as v from "valibot";
import { BAP_ID_PATTERN } from "../../lib/bap.js";
import { problem } from "../../lib/errors.js";
import { PROBLEM_CODES as CODES } from "../../lib/problem-codes.js";
import * as store from "./store.js";
import type { Database } from "../../lib/db/tables.js";

/**
 * The backup operations that more than one front door offers: GET /api/backup/status and
 * POST /api/backup (routes/backup/backup.ts) and the agent capabilities `backup.status` and
 * `backup.push` (plugins/agents). Each front door authenticates its caller its own way and
 * hands over a `BackupCaller`; the rules about which identity is written stay here, once.
 */

export const BapId = v.pipe(v.string(), v.regex(BAP_ID_PATTERN, "must be a BAP identity key"));
// bitcoin-backup ciphertext is base64 (salt | iv | AES-GCM data). Refusing anything else keeps
// a client that forgot to encrypt (JSON with a WIF in it) from storing its keys here.
export const Ciphertext = v.pipe(v.string(), v.minLength(16, "is too short to be ciphertext"), v.regex(/^[A-Za-z0-9+/_-]+={0,2}$/, "must be base64 ciphertext"));
export const PushBackupInput = v.object({ encryptedBackup: Ciphertext, bapId: v.optional(BapId) });
export type PushBackupInput = v.InferOutput<typeof PushBackupInput>;

/** Who is calling, and which identity the credential itself names (an OAuth token's referenceId). */
export interface BackupCaller {
  userId: string;
  referenceId: string | null;
  /** A session may pick among its own identities; an OAuth token or an agent is bound to one. */
  via: "session" | "oauth" | "agent";
}

export interface BackupStatus {
  hasBackup: boolean;
  updatedAt: string | null;
  userId: string;
  bapId: string | null;
  generation: number | null;
  linkedOAuthAccounts: { provider: string; accountId: string; linkedAt: string }[];
}

export const notOwned = (detail?: string) => problem(CODES.IDENTITY_NOT_OWNED, { detail });
export const noIdentity = () => problem(CODES.NO_BAP_IDENTITY);

/**
 * The identity a caller's writes and status speak for: the one an OAuth token was issued
 * for (its referenceId), else the account's primary identity. A referenceId the user no
 * longer owns is refused, never silently redirected to another identity.
 */
export async function identityOf(db: Kysely<Database>, caller: BackupCaller): Promise<store.BapIdentityRef | null> {
  if (caller.referenceId) {
    const selected = await store.findOwnedIdentity(db, caller.userId, caller.referenceId);
    if (!selected) throw notOwned("The identity this token was issued for is no longer registered to the account.");
    return selected;
  }
  return store.findPrimaryIdentity(db, caller.userId);
}

/** GET /api/backup/status: whether the caller's identity has a backup, and its recovery links. */
export async function backupStatus(db: Kysely<Database>, caller: BackupCaller): Promise<BackupStatus> {
  const identity = await identityOf(db, caller);
  const meta = identity ? await store.findBackupMeta(db, identity.bapId) : null;
  const links = identity ? await store.listRecoveryLinks(db, identity.bapId) : [];
  return {
    hasBackup: Boolean(meta),
    updatedAt: meta?.lastUpdated ?? null,
    userId: caller.userId,
    bapId: identity?.bapId ?? null,
    generation: meta?.generation ?? null,
    linkedOAuthAccounts: links.map((l) => ({ provider: l.provider, accountId: l.accountId, linkedAt: l.linkedAt })),
  };
}

/** POST /api/backup: the credential decides the identity; generation + 1. */
export async function pushBackup(db: Kysely<Database>, caller: BackupCaller, input: PushBackupInput) {
  let identity = await identityOf(db, caller);
  // A body bapId never moves a backup to an identity the caller does not own. A session
  // may pick among its own identities; an OAuth token or an agent is bound to the one it has.
  if (input.bapId && input.bapId !== identity?.bapId) {
    const owned = caller.via === "session" ? await store.findOwnedIdentity(db, caller.userId, input.bapId) : null;
    if (!owned) throw notOwned(caller.via === "session" ? undefined : `This ${caller.via === "oauth" ? "token" : "agent"} may only write its own identity's backup.`);
    identity = owned;
  }
  if (!identity) throw noIdentity();
  const generation = await store.storeBackup(db, { bapId: identity.bapId, userId: caller.userId, backup: input.encryptedBackup });
  return { success: true as const, bapId: identity.bapId, generation, message: "Backup stored." };
}
