import type { BetterAuthPlugin } from "better-auth";
import { backupSchema } from "./schema.js";

/**
 * OAuth scopes of the backup routes (RFC 6749 §3.3). An app's token reaches a backup only with
 * the scope that names the operation, so a sign-in-only (`openid`) token can neither replace
 * the ciphertext nor read who can recover it. Two scopes, not one: reading the status lists
 * the provider accounts that can recover the identity (personal data), writing replaces the
 * stored copy; an app that only shows "backed up: yes/no" should not be able to overwrite it.
 * A session (the person at our own pages) is not limited by scopes.
 */
export const BACKUP_SCOPES = {
  /** GET /api/backup/status. */
  read: "backup:read",
  /** POST /api/backup and POST /api/backup/link-oauth. */
  write: "backup:write",
} as const;
export type BackupScope = (typeof BACKUP_SCOPES)[keyof typeof BACKUP_SCOPES];

/**
 * Encrypted identity backups: the tables only (`npm run db:migrate` creates them). The HTTP
 * surface is the Hono sub-app in routes/backup/backup.ts, which reads and writes them through
 * ./store.ts.
 */
export function backup() {
  return {
    id: "backup",
    schema: backupSchema,
  } satisfies BetterAuthPlugin;
}
