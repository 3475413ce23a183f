import { randomBytes } from "node:crypto";
import { Hono } from "hono";
import type { PageKit } from "../page-kit.js";
import { upstreamError } from "../page-kit.js";
import type { AccountActions } from "./actions.js";
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

export function organizationRoutes(kit: PageKit, act: AccountActions) {
  const app = new Hono();

  app.post("/create", async (c) => {
    const session = await act.guard(c);
    if (session instanceof Response) return session;
    const f = await kit.form(c);
    const name = (f.name ?? "").trim();
    const chosen = (f.slug ?? "").trim().toLowerCase();
    if (!name || name.length > 100 || (chosen && !/^[a-z0-9](?:[a-z0-9-]{0,58}[a-z0-9])?$/.test(chosen))) return act.failed(null, ANCHOR, "INVALID_INPUT");
    let upstream = await kit.callAuth(c, "/organization/create", { name, slug: chosen || slugFrom(name) });
    // A short name we made up that is taken: once more with a random tail. A chosen one is the person's to change.
    if (!chosen && !upstream.ok && (await upstreamError(upstream)).code === "ORGANIZATION_ALREADY_EXISTS") {
      upstream = await kit.callAuth(c, "/organization/create", { name, slug: `${slugFrom(name).slice(0, 40)}-${randomBytes(3).toString("hex")}` });
    }
    return upstream.ok ? act.done(upstream, "organization-created", ANCHOR) : act.failed(upstream, ANCHOR);
  });

  app.post("/invite", async (c) => {
    const session = await act.guard(c);
    if (session instanceof Response) return session;
    const f = await kit.form(c);
    const email = (f.email ?? "").trim();
    if (!f.organization_id || !email || !isRole(f.role)) return act.failed(null, ANCHOR, "INVALID_INPUT");
    // The invitation mail goes out from the plugin (plugins/organizations).
    return act.replay(c, "/organization/invite-member", { organizationId: f.organization_id, email, role: f.role }, "invitation-sent", ANCHOR);
  });

  app.post("/cancel-invitation", async (c) => {
    const session = await act.guard(c);
    if (session instanceof Response) return session;
    const id = (await kit.form(c)).invitation_id;
    if (!id) return act.failed(null, ANCHOR, "NOT_FOUND");
    return act.replay(c, "/organization/cancel-invitation", { invitationId: id }, "invitation-canceled", ANCHOR);
  });

  app.post("/role", async (c) => {
    const session = await act.guard(c);
    if (session instanceof Response) return session;
    const f = await kit.form(c);
    if (!f.organization_id || !f.member_id || !isRole(f.role)) return act.failed(null, ANCHOR, "INVALID_INPUT");
    return act.replay(c, "/organization/update-member-role", { organizationId: f.organization_id, memberId: f.member_id, role: f.role }, "role-changed", ANCHOR);
  });

  app.post("/leave", async (c) => {
    const session = await act.guard(c);
    if (session instanceof Response) return session;
    const id = (await kit.form(c)).organization_id;
    if (!id) return act.failed(null, ANCHOR, "NOT_FOUND");
    return act.replay(c, "/organization/leave", { organizationId: id }, "organization-left", ANCHOR);
  });

  return app;
}
