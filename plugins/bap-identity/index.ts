import type { BetterAuthPlugin } from "better-auth";
import type { Kysely } from "kysely";
import { mailboxProof } from "./mailbox-proof.js";
import { identitySchema } from "./schema.js";
import type { Database } from "../../lib/db/tables.js";

/**
 * Adds the spec's User fields (pubkey, subscriptionTier, onboarding_completed) and BAP
 * identities, and suspends what was attached to an account before its owner proved the mailbox
 * (./mailbox-proof.ts).
 */
export function bapIdentity(db: Kysely<Database>) {
  return {
    id: "bap-identity",
    schema: identitySchema,
    hooks: mailboxProof(db),
  } satisfies BetterAuthPlugin;
}
