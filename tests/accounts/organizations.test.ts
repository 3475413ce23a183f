import { randomBytes } from "node:crypto";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import type { Mail } from "../../lib/mailer.js";
import { fillByLabel, submitWith } from "../helpers/browser.js";
import { signInThroughPage, useBrowser, useTestServer } from "../helpers/fixtures.js";
import { signUp } from "../helpers/oauth.js";
import { uniqueEmail } from "../helpers/server.js";

/**
 * Organizations through the account page, JavaScript off: create one, invite by e-mail (the
 * mail is captured by an injected mailer), the invitee accepts from the e-mailed link, roles
 * change, members leave. The spec's defaults: Invitation `pending`, Member role `member`.
 */
const mails: Mail[] = [];
const server = useTestServer({}, { mailer: async (mail) => void mails.push(mail) });
const browser = useBrowser();

async function signedInPage(person: { email: string; password: string }): Promise<Page> {
  const page = await browser.page({ javaScriptEnabled: false });
  await page.goto(`${server.url}/sign-in`);
  await signInThroughPage(page, person);
  expect(new URL(page.url()).pathname).toBe("/");
  return page;
}

function invitationLink(to: string): string {
  const mail = mails.filter((m) => m.to === to).at(-1);
  expect(mail, `mail to ${to}`).toBeDefined();
  const link = /https?:\/\/\S+\/invitations\/\S+/.exec(mail!.text)?.[0];
  expect(link).toBeTruthy();
  return link!;
}

/** Organization names are unique per run: a PostgreSQL test database outlives one run. */
const RUN = randomBytes(3).toString("hex");

const invitationRow = (id: string) => server.db.selectFrom("invitation").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
const memberRow = (organizationId: string, userId: string) => server.db.selectFrom("member").selectAll().where("organizationId", "=", organizationId).where("userId", "=", userId).executeTakeFirst();

async function createOrganization(page: Page, base: string) {
  const name = `${base} ${RUN}`;
  await page.goto(`${server.url}/account/organizations`);
  await fillByLabel(page, "Organization name", name);
  await submitWith(page, "Create organization");
  expect(new URL(page.url()).searchParams.get("notice")).toBe("organization-created");
  const org = await server.db.selectFrom("organization").selectAll().where("name", "=", name).executeTakeFirstOrThrow();
  return org as { id: string; slug: string; name: string };
}

/** The organization's name on the page (with this run's tail). */
function named(org: { name: string }) {
  return org.name;
}

async function invite(page: Page, org: { id: string }, email: string, role = "member") {
  const article = page.locator(`article[data-organization-id="${org.id}"]`);
  await article.getByLabel("Invite by e-mail", { exact: true }).fill(email);
  await article.getByLabel("Role", { exact: true }).selectOption(role);
  await Promise.all([page.waitForNavigation(), article.getByRole("button", { name: "Send invitation", exact: true }).click()]);
  expect(new URL(page.url()).searchParams.get("notice")).toBe("invitation-sent");
}

describe("organizations", () => {
  it("an invitation by e-mail is accepted by a second user: member role, status no longer pending", async () => {
    const owner = await signUp(server, { name: "Olive Owner" });
    const invitee = await signUp(server, { name: "Ivan Invitee" });
    const ownerPage = await signedInPage(owner);
    const org = await createOrganization(ownerPage, "Acme Research");
    expect(org.slug).toBe(`acme-research-${RUN}`);
    await expect(ownerPage.locator(`article[data-organization-id="${org.id}"] h3`).first().textContent()).resolves.toMatch(new RegExp(`${named(org)}.*you are owner`));

    await invite(ownerPage, org, invitee.email);
    const link = invitationLink(invitee.email);
    const invitationId = decodeURIComponent(new URL(link).pathname.split("/").at(-1)!);
    const pending = await invitationRow(invitationId);
    expect(pending).toMatchObject({ status: "pending", role: "member", email: invitee.email, organizationId: org.id, inviterId: owner.user.id });
    // The owner sees it waiting.
    await expect(ownerPage.locator(`article[data-organization-id="${org.id}"]`).textContent()).resolves.toContain(`${invitee.email} as member (pending`);

    // The invitee opens the link signed out: sign in, come back to the invitation, accept.
    const page = await browser.page({ javaScriptEnabled: false });
    await page.goto(link);
    await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe(`Join ${named(org)}`);
    await Promise.all([page.waitForNavigation(), page.getByRole("link", { name: "Sign in", exact: true }).click()]);
    await signInThroughPage(page, invitee);
    expect(new URL(page.url()).pathname).toBe(new URL(link).pathname);
    await submitWith(page, "Accept");
    expect(new URL(page.url()).pathname).toBe("/account/organizations");
    expect(new URL(page.url()).searchParams.get("notice")).toBe("invitation-accepted");
    await expect(page.locator(`article[data-organization-id="${org.id}"] h3`).first().textContent()).resolves.toMatch(/you are member/);

    const accepted = await invitationRow(invitationId);
    expect(accepted.status).toBe("accepted");
    expect(await memberRow(org.id, invitee.user.id)).toMatchObject({ role: "member" });
    // An accepted invitation cannot be used again.
    await page.goto(link);
    await expect(page.locator("main").textContent()).resolves.toMatch(/no longer open/);
  });

  it("owners change roles; members leave; the last owner cannot leave", async () => {
    const owner = await signUp(server);
    const member = await signUp(server);
    const ownerPage = await signedInPage(owner);
    const org = await createOrganization(ownerPage, "Role Play");
    await invite(ownerPage, org, member.email);
    const accept = await server.api("/api/auth/organization/accept-invitation", { cookie: member.cookie, body: { invitationId: decodeURIComponent(invitationLink(member.email).split("/").at(-1)!) } });
    expect(accept.status).toBe(200);

    await ownerPage.goto(`${server.url}/account/organizations`);
    const article = ownerPage.locator(`article[data-organization-id="${org.id}"]`);
    await article.getByLabel(`Role of ${member.email}`, { exact: true }).selectOption("admin");
    await Promise.all([ownerPage.waitForNavigation(), article.getByRole("button", { name: "Change role", exact: true }).click()]);
    expect(new URL(ownerPage.url()).searchParams.get("notice")).toBe("role-changed");
    expect(await memberRow(org.id, member.user.id)).toMatchObject({ role: "admin" });

    // The only owner may not leave.
    await submitWith(ownerPage, `Leave organization ${named(org)}`);
    expect(new URL(ownerPage.url()).searchParams.get("error")).toBe("YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER");
    await expect(ownerPage.getByRole("alert").textContent()).resolves.toMatch(/only owner/i);
    expect(await memberRow(org.id, owner.user.id)).toBeDefined();

    const memberPage = await signedInPage(member);
    await memberPage.goto(`${server.url}/account/organizations`);
    await submitWith(memberPage, `Leave organization ${named(org)}`);
    expect(new URL(memberPage.url()).searchParams.get("notice")).toBe("organization-left");
    expect(await memberRow(org.id, member.user.id)).toBeUndefined();
  });

  it("only the invited address can answer; a declined invitation is rejected; a verified invitee sees it on the account page", async () => {
    const owner = await signUp(server);
    const invitee = await signUp(server);
    const stranger = await signUp(server);
    const ownerPage = await signedInPage(owner);
    const org = await createOrganization(ownerPage, "Invite Only");
    await invite(ownerPage, org, invitee.email);
    const link = invitationLink(invitee.email);
    const invitationId = decodeURIComponent(link.split("/").at(-1)!);

    // Someone else, signed in, holding the link: no buttons, and the API refuses.
    const strangerPage = await signedInPage(stranger);
    await strangerPage.goto(link);
    await expect(strangerPage.locator("main").textContent()).resolves.toMatch(/signed in as/);
    expect(await strangerPage.getByRole("button", { name: "Accept" }).count()).toBe(0);
    const refused = await server.api("/api/auth/organization/accept-invitation", { cookie: stranger.cookie, body: { invitationId } });
    expect(refused.status).toBe(403);
    expect((await invitationRow(invitationId)).status).toBe("pending");

    // With a verified address, the invitation is listed on the account page too; decline it there.
    await server.db.updateTable("user").set({ emailVerified: true }).where("id", "=", invitee.user.id).execute();
    const inviteePage = await signedInPage(invitee);
    await inviteePage.goto(`${server.url}/account/organizations`);
    const listed = inviteePage.locator(`section#organizations li[data-invitation-id="${invitationId}"]`);
    await expect(listed.textContent()).resolves.toContain(`${named(org)} invites you as member`);
    await Promise.all([inviteePage.waitForNavigation(), listed.getByRole("button", { name: "Decline", exact: true }).click()]);
    expect(new URL(inviteePage.url()).searchParams.get("notice")).toBe("invitation-declined");
    expect((await invitationRow(invitationId)).status).toBe("rejected");
    expect(await memberRow(org.id, invitee.user.id)).toBeUndefined();
  });

  it("the owner cancels a pending invitation", async () => {
    const owner = await signUp(server);
    const ownerPage = await signedInPage(owner);
    const org = await createOrganization(ownerPage, "Cancel Corp");
    const email = uniqueEmail("never");
    await invite(ownerPage, org, email);
    const invitationId = decodeURIComponent(invitationLink(email).split("/").at(-1)!);
    await submitWith(ownerPage, `Cancel the invitation to ${email}`);
    expect(new URL(ownerPage.url()).searchParams.get("notice")).toBe("invitation-canceled");
    expect((await invitationRow(invitationId)).status).toBe("canceled");
  });

  it("organization forms refuse posts from other sites", async () => {
    const owner = await signUp(server);
    const res = await fetch(`${server.url}/account/organizations/create`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie: owner.cookie, origin: "https://evil.example", "sec-fetch-site": "cross-site" },
      body: "name=Evil",
      redirect: "manual",
    });
    expect(res.status).toBe(403);
    expect(await server.db.selectFrom("organization").select("id").where("name", "=", "Evil").executeTakeFirst()).toBeUndefined();
  });
});
