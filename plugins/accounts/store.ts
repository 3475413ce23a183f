import type { Kysely } from "kysely";
import { isSuspended, listIdentities } from "../bap-identity/store.js";
import type { Database } from "../../lib/db/tables.js";

/**
 * What the account page (routes/pages/account) and the certificate eligibility check read of a
 * person's sessions, linked accounts, passkeys, identities, two-factor and organizations, as
 * named queries on the one Kysely instance. Reads go to the
 * database directly (better-auth's /list-sessions, for one, answers only for a session less
 * than a day old); every change still goes through better-auth's endpoints.
 */

/** Sessions, linked accounts and passkeys are better-auth's tables, read through their owner (plugins/core-store). */
export { listActiveSessions, type SessionRow } from "../core-store/sessions.js";
export { listLinkedAccounts, type LinkedAccount } from "../core-store/accounts.js";
export { listPasskeys, type PasskeyRow } from "../core-store/passkeys.js";
/** The user's two-factor flag and the organizations' tables, read through their owner (plugins/core-store) too. */
export { findTwoFactorEnabled } from "../core-store/users.js";
export {
  listInvitationsFor,
  listMemberships,
  listOrganizationMembers,
  listPendingInvitations,
  type Membership,
  type OrganizationInvitation,
  type OrganizationMember,
  type ReceivedInvitation,
} from "../core-store/organizations.js";

export interface BapIdentityRow {
  bapId: string;
  name: string | null;
  isPrimary: boolean;
  currentAddress: string | null;
  rootAddress: string;
  /** Suspended by a mailbox proof (plugins/bap-identity/mailbox-proof.ts) until the owner confirms it. */
  suspended: boolean;
}

export async function listBapIdentities(db: Kysely<Database>, userId: string): Promise<BapIdentityRow[]> {
  return (await listIdentities(db, userId)).map((r) => ({ bapId: r.bapId, name: r.name, isPrimary: r.isPrimary, currentAddress: r.currentAddress, rootAddress: r.rootAddress, suspended: isSuspended(r) }));
}
