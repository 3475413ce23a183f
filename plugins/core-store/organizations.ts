import type { Kysely } from "kysely";
import { asDate } from "../../lib/db/sqlite-values.js";
import type { Database } from "../../lib/db/tables.js";

/**
 * The organization plugin's tables (`organization`, `member`, `invitation`) as our pages read
 * them (its one owner here). Every change goes through better-auth's organization endpoints.
 */

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

export interface InvitationDetails {
  id: string;
  email: string;
  role: string;
  status: string;
  expiresAt: Date;
  organizationName: string;
  inviterName: string | null;
  inviterEmail: string | null;
}

/** One invitation with its organization's name and who sent it (the invitation page). */
export async function findInvitation(db: Kysely<Database>, id: string): Promise<InvitationDetails | null> {
  const row = await db
    .selectFrom("invitation")
    .innerJoin("organization", "organization.id", "invitation.organizationId")
    .leftJoin("user", "user.id", "invitation.inviterId")
    .select(["invitation.id", "invitation.email", "invitation.role", "invitation.status", "invitation.expiresAt", "organization.name as organizationName", "user.name as inviterName", "user.email as inviterEmail"])
    .where("invitation.id", "=", id)
    .executeTakeFirst();
  if (!row) return null;
  return { ...row, role: row.role ?? "member", expiresAt: asDate(row.expiresAt) } as InvitationDetails;
}
