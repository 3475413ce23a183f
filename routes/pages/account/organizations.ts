import { randomBytes } from "node:crypto";
import { Hono } from "hono";
import { callAuth, readForm, upstreamError } from "../form-replay.js";
import type { PageContext, PageEnv } from "../page-env.js";
import { accountForm, backToAccount, backWithError, replayThenBack } from "./outcome.js";
import { ORGANIZATION_ROLES } from "./organizations-section.js";

/**
 * Organization forms of the account page, mounted at /account/organizations: create, invite,
 * cancel an invitation, change a member's role, leave. better-auth's organization plugin
 * decides who may do what (owners and admins manage; only an owner grants `owner`; the last
 * owner cannot leave).
 */
const ANCHOR = "organizations";
const isRole = (role: string | undefined): role is (typeof ORGANIZATION_ROLES)[number] => ORGANIZATION_ROLES.includes(role as never);

/** A URL-safe short name from a display name: "Acme & Co." -> "acme-co". */
export function slugFrom(name: string): string {
  const slug = name
    .normalize("NFKD")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 48)
    .replace(/-+$/, "");
  return slug || "org";
}

async function createOrganization(c: PageContext) {
  const f = await readForm(c);
  const name = (f.name ?? "").trim();
  const chosen = (f.slug ?? "").trim().toLowerCase();
  if (!name || name.length > 100 || (chosen && !/^[a-z0-9](?:[a-z0-9-]{0,58}[a-z0-9])?$/.test(chosen))) return backWithError(null, ANCHOR, "INVALID_INPUT");
  let upstream = await callAuth(c, "/organization/create", { name, slug: chosen || slugFrom(name) });
  // A short name we made up that is taken: once more with a random tail. A chosen one is the person's to change.
  if (!chosen && !upstream.ok && (await upstreamError(upstream)).code === "ORGANIZATION_ALREADY_EXISTS") {
    upstream = await callAuth(c, "/organization/create", { name, slug: `${slugFrom(name).slice(0, 40)}-${randomBytes(3).toString("hex")}` });
  }
  return backToAccount(upstream, "organization-created", ANCHOR);
}

async function invite(c: PageContext) {
  const f = await readForm(c);
  const email = (f.email ?? "").trim();
  if (!f.organization_id || !email || !isRole(f.role)) return backWithError(null, ANCHOR, "INVALID_INPUT");
  // The invitation mail goes out from the plugin (plugins/organizations).
  return replayThenBack(c, "/organization/invite-member", { organizationId: f.organization_id, email, role: f.role }, "invitation-sent", ANCHOR);
}

async function cancelInvitation(c: PageContext) {
  const id = (await readForm(c)).invitation_id;
  if (!id) return backWithError(null, ANCHOR, "NOT_FOUND");
  return replayThenBack(c, "/organization/cancel-invitation", { invitationId: id }, "invitation-canceled", ANCHOR);
}

async function changeRole(c: PageContext) {
  const f = await readForm(c);
  if (!f.organization_id || !f.member_id || !isRole(f.role)) return backWithError(null, ANCHOR, "INVALID_INPUT");
  return replayThenBack(c, "/organization/update-member-role", { organizationId: f.organization_id, memberId: f.member_id, role: f.role }, "role-changed", ANCHOR);
}

async function leave(c: PageContext) {
  const id = (await readForm(c)).organization_id;
  if (!id) return backWithError(null, ANCHOR, "NOT_FOUND");
  return replayThenBack(c, "/organization/leave", { organizationId: id }, "organization-left", ANCHOR);
}

/** Mounted at /account/organizations. */
export const organizationRoutes = new Hono<PageEnv>()
  .post("/create", ...accountForm, createOrganization)
  .post("/invite", ...accountForm, invite)
  .post("/cancel-invitation", ...accountForm, cancelInvitation)
  .post("/role", ...accountForm, changeRole)
  .post("/leave", ...accountForm, leave);
