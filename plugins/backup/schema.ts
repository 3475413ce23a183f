import type { BetterAuthPluginDBSchema } from "@better-auth/core/db";

/**
 * The spec's "Backup record" and its recovery mappings.
 *
 * `bapBackup`: one encrypted backup per BAP identity. The server stores the ciphertext it is
 * given and never decrypts it. `generation` counts writes through POST /api/backup.
 * `previousBackup` keeps the ciphertext each write replaced (one generation back), so a single
 * bad or malicious write can be undone by an operator; it is never served.
 *
 * `backupRecoveryLink`: `provider|accountId` -> BAP identity. better-auth's schema has no
 * composite unique index, so `providerAccount` holds exactly `provider|accountId` and is unique:
 * one provider account recovers at most one identity.
 */
export const backupSchema = {
  bapBackup: {
    fields: {
      bapId: { type: "string", required: true, unique: true },
      userId: { type: "string", required: true, references: { model: "user", field: "id", onDelete: "cascade" }, index: true },
      /** Ciphertext only (the bitcoin-backup format is base64). */
      backup: { type: "string", required: true },
      /** The ciphertext the last write replaced; null until a second write. */
      previousBackup: { type: "string", required: false },
      generation: { type: "number", required: true, defaultValue: 0 },
      lastUpdated: { type: "date", required: true },
      createdAt: { type: "date", required: true },
    },
  },
  backupRecoveryLink: {
    fields: {
      providerAccount: { type: "string", required: true, unique: true },
      provider: { type: "string", required: true },
      accountId: { type: "string", required: true },
      bapId: { type: "string", required: true, index: true },
      userId: { type: "string", required: true, references: { model: "user", field: "id", onDelete: "cascade" }, index: true },
      createdAt: { type: "date", required: true },
    },
  },
} satisfies BetterAuthPluginDBSchema;
