import type { Kysely } from "kysely";
import { asBool, asDate } from "../../lib/db/sqlite-values.js";
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

/** Whether the user turned two-factor on (a verified authenticator); backup codes are stored encrypted and not counted. */
export async function findTwoFactorEnabled(db: Kysely<Database>, userId: string): Promise<boolean> {
  const user = await db.selectFrom("user").select(["twoFactorEnabled"]).where("id", "=", userId).executeTakeFirst();
  return asBool(user?.twoFactorEnabled);
}

export interface Membership {
  organizationId: string;
  name: string;
  slug: string;
  memberId: string;
  role: string;
}

export interface OrganizationMember {
  id: string;
  organizationId: string;
  userId: string;
  role: string;
  name: string;
  email: string;
}

export interface OrganizationInvitation {
  id: string;
  organizationId: string;
  email: string;
  role: string;
  status: string;
  expiresAt: Date;
}

export async function listMemberships(db: Kysely<Database>, userId: string): Promise<Membership[]> {
  const rows = await db
    .selectFrom("member")
    .innerJoin("organization", "organization.id", "member.organizationId")
    .select(["member.id as memberId", "member.role", "organization.id as organizationId", "organization.name", "organization.slug"])
    .where("member.userId", "=", userId)
    .orderBy("organization.name", "asc")
    .execute();
  return rows.map((r) => ({ organizationId: r.organizationId, name: r.name, slug: r.slug, memberId: r.memberId, role: r.role }));
}

export async function listOrganizationMembers(db: Kysely<Database>, organizationIds: string[]): Promise<OrganizationMember[]> {
  if (!organizationIds.length) return [];
  const rows = await db
    .selectFrom("member")
    .innerJoin("user", "user.id", "member.userId")
    .select(["member.id", "member.organizationId", "member.userId", "member.role", "user.name", "user.email"])
    .where("member.organizationId", "in", organizationIds)
    .orderBy("member.createdAt", "asc")
    .execute();
  return rows.map((r) => ({ id: r.id, organizationId: r.organizationId, userId: r.userId, role: r.role, name: r.name, email: r.email }));
}

export async function listPendingInvitations(db: Kysely<Database>, organizationIds: string[]): Promise<OrganizationInvitation[]> {
  if (!organizationIds.length) return [];
  const rows = await db
    .selectFrom("invitation")
    .select(["id", "organizationId", "email", "role", "status", "expiresAt"])
    .where("organizationId", "in", organizationIds)
    .where("status", "=", "pending")
    .orderBy("createdAt", "asc")
    .execute();
  const now = Date.now();
  return rows
    .map((r) => ({ id: r.id, organizationId: r.organizationId, email: r.email, role: r.role ?? "member", status: r.status, expiresAt: asDate(r.expiresAt) }))
    .filter((i) => i.expiresAt.getTime() > now);
}

export interface ReceivedInvitation {
  id: string;
  organizationName: string;
  role: string;
  expiresAt: Date;
}

/**
 * Pending invitations addressed to `email`. Only for a verified address: without that, the
 * invitation link (an opaque id sent to the mailbox) is the proof that the invitee reads it,
 * as better-auth's own /organization/list-user-invitations decides.
 */
export async function listInvitationsFor(db: Kysely<Database>, email: string): Promise<ReceivedInvitation[]> {
  const rows = await db
    .selectFrom("invitation")
    .innerJoin("organization", "organization.id", "invitation.organizationId")
    .select(["invitation.id", "invitation.role", "invitation.expiresAt", "organization.name"])
    .where("invitation.email", "=", email.toLowerCase())
    .where("invitation.status", "=", "pending")
    .orderBy("invitation.createdAt", "asc")
    .execute();
  const now = Date.now();
  return rows.map((r) => ({ id: r.id, organizationName: r.name, role: r.role ?? "member", expiresAt: asDate(r.expiresAt) })).filter((i) => i.expiresAt.getTime() > now);
}
