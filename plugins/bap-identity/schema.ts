import type { BetterAuthPluginDBSchema } from "@better-auth/core/db";

/**
 * The spec's extra User fields and the BAP identity registration record.
 * Profiles are written by the BAP issue's routes; the claims plumbing reads them now.
 */
export const identitySchema = {
  user: {
    fields: {
      pubkey: { type: "string", required: false, input: false },
      subscriptionTier: { type: "string", required: false, defaultValue: "free", input: false },
      onboarding_completed: { type: "boolean", required: false, defaultValue: false, input: true },
    },
  },
  session: {
    fields: {
      /** The BAP identity this session speaks for in OAuth consent (validated against ownership on use). */
      selectedBapId: { type: "string", required: false, input: true },
    },
  },
  bapIdentity: {
    fields: {
      userId: { type: "string", required: true, references: { model: "user", field: "id", onDelete: "cascade" }, index: true },
      bapId: { type: "string", required: true, unique: true },
      rootAddress: { type: "string", required: true },
      currentAddress: { type: "string", required: false },
      memberPubkey: { type: "string", required: false, index: true },
      /** The identity document (JSON string), user-authored. */
      identity: { type: "string", required: false },
      isPrimary: { type: "boolean", required: true, defaultValue: false },
      /** Stored metadata from registration: label, identity counter, the account (wallet) key. */
      name: { type: "string", required: false },
      counter: { type: "number", required: false },
      accountPubkey: { type: "string", required: false },
      /**
       * Set when the owner proved the mailbox of an account whose address was unverified while
       * this identity was on it (plugins/bap-identity/mailbox-proof.ts): refused at key sign-in and
       * left out of tokens until the owner confirms it. Null: in force.
       */
      suspendedAt: { type: "date", required: false, input: false },
      createdAt: { type: "date", required: true },
      updatedAt: { type: "date", required: true },
    },
  },
  /** Unpublished profile edits: saving one signs and broadcasts nothing. One per identity. */
  bapProfileDraft: {
    fields: {
      bapId: { type: "string", required: true, unique: true },
      userId: { type: "string", required: true, references: { model: "user", field: "id", onDelete: "cascade" }, index: true },
      profile: { type: "string", required: true },
      createdAt: { type: "date", required: true },
      updatedAt: { type: "date", required: true },
    },
  },
  /** A profile the owner published on chain (we record the txid; we never broadcast). */
  bapPublication: {
    fields: {
      bapId: { type: "string", required: true, index: true },
      userId: { type: "string", required: true, references: { model: "user", field: "id", onDelete: "cascade" } },
      txid: { type: "string", required: true, unique: true },
      profile: { type: "string", required: true },
      kind: { type: "string", required: false },
      fundedBy: { type: "string", required: false },
      createdAt: { type: "date", required: true },
    },
  },
} satisfies BetterAuthPluginDBSchema;
