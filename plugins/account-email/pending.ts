import { createHash, randomBytes } from "node:crypto";
import type { AuthContext } from "better-auth";

/**
 * Pending e-mail changes and their undo links, kept in better-auth's verification table
 * (or its secondary storage). The link carries a random token; only its SHA-256 is stored,
 * so a copy of the database holds no usable link. Each record is consumed once
 * (`consumeVerificationValue` is race-safe).
 */
export interface PendingChange {
  userId: string;
  /** The address the account had when the change was asked for. */
  from: string;
  to: string;
}

export interface UndoRecord extends PendingChange {
  /** Whether `from` was verified, restored with it. */
  fromVerified: boolean;
  /** Key of the pending confirmation, cancelled by an undo before the new address confirms. */
  confirmKey: string | null;
}

type Adapter = AuthContext["internalAdapter"];
const CONFIRM = "email-change:confirm:";
const UNDO = "email-change:undo:";

export function newLinkToken(): { token: string; key: string } {
  const token = randomBytes(32).toString("base64url");
  return { token, key: keyOf(token) };
}

export function keyOf(token: string): string {
  return createHash("sha256").update(token).digest("base64url");
}

export async function savePendingChange(adapter: Adapter, key: string, change: PendingChange, ttlSeconds: number) {
  await adapter.createVerificationValue({ identifier: CONFIRM + key, value: JSON.stringify(change), expiresAt: new Date(Date.now() + ttlSeconds * 1000) });
}

export async function saveUndo(adapter: Adapter, key: string, undo: UndoRecord, ttlSeconds: number) {
  await adapter.createVerificationValue({ identifier: UNDO + key, value: JSON.stringify(undo), expiresAt: new Date(Date.now() + ttlSeconds * 1000) });
}

/** The pending change a confirmation token names, consumed; null when unknown, used or expired. */
export async function takePendingChange(adapter: Adapter, token: string): Promise<PendingChange | null> {
  return parse<PendingChange>(await adapter.consumeVerificationValue(CONFIRM + keyOf(token)));
}

export async function takeUndo(adapter: Adapter, token: string): Promise<UndoRecord | null> {
  return parse<UndoRecord>(await adapter.consumeVerificationValue(UNDO + keyOf(token)));
}

export async function cancelPendingChange(adapter: Adapter, key: string) {
  await adapter.deleteVerificationByIdentifier(CONFIRM + key);
}

function parse<T>(row: { value: string } | null | undefined): T | null {
  if (!row) return null;
  try {
    return JSON.parse(row.value) as T;
  } catch {
    return null;
  }
}
