import { describe, expect, it } from "vitest";
import { submitWith } from "../helpers/browser.js";
import { signInThroughPage, useBrowser, useTestServer } from "../helpers/fixtures.js";
import { token } from "../helpers/oauth.js";
import type { TestServer } from "../helpers/server.js";
import { exchange, introspect, mcp, personsGrant, registerAgent } from "../helpers/token-exchange.js";

/**
 * The account page's authorized apps list, per app, the agents acting for the person through
 * tokens exchanged from that app's grant (RFC 8693), each with a revoke button: in headless
 * Chromium, and the refusals as plain form posts.
 */
const server = useTestServer();
const browser = useBrowser();

async function accountPage(target: TestServer, cookie: string): Promise<string> {
  const res = await fetch(`${target.url}/account/apps`, { headers: { cookie } });
  expect(res.status).toBe(200);
  return res.text();
}

/** The app's row of the authorized apps table. */
function appRow(html: string, clientId: string): string {
  const start = html.indexOf(`<tr data-client-id="${clientId}"`);
  expect(start, "the app is listed").toBeGreaterThanOrEqual(0);
  return html.slice(start, html.indexOf("</tr>", start));
}

function postAccountForm(target: TestServer, path: string, cookie: string, fields: Record<string, string>) {
  return fetch(`${target.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie, origin: target.url, "sec-fetch-site": "same-origin" },
    body: new URLSearchParams(fields).toString(),
    redirect: "manual",
  });
}

describe("agents acting for the person, on the account page", () => {
  it("lists them under the app they act through; revoking one from the page ends its delegated tokens and nothing else", async () => {
    const grant = await personsGrant(server);
    const [calendar, mail] = [await registerAgent(server, "Calendar Agent"), await registerAgent(server, "Mail Agent")];
    const fromCalendar = (await exchange(calendar, grant.accessToken, { resource: mcp(server) })).access_token;
    const fromMail = (await exchange(mail, grant.accessToken, { resource: mcp(server) })).access_token;

    const page = await browser.page();
    await page.goto(`${server.url}/account/apps`);
    await signInThroughPage(page, grant.person);
    const row = page.locator(`section#apps tr[data-client-id="${grant.app.client_id}"]`);
    await expect(row.locator(`li[data-agent-id="${calendar.id}"]`).textContent()).resolves.toContain("Calendar Agent");
    await expect(row.locator(`li[data-agent-id="${mail.id}"]`).textContent()).resolves.toContain("Mail Agent");

    await submitWith(page, "Revoke Calendar Agent acting through Person's App");
    expect(new URL(page.url()).searchParams.get("notice")).toBe("delegation-revoked");
    await expect(page.getByRole("status").first().textContent()).resolves.toMatch(/no longer acts for you/);
    expect(await row.locator(`li[data-agent-id="${calendar.id}"]`).count()).toBe(0);
    expect(await row.locator(`li[data-agent-id="${mail.id}"]`).count()).toBe(1);
    expect((await introspect(server, calendar, fromCalendar)).json).toEqual({ active: false });
    expect((await introspect(server, mail, fromMail)).json.active).toBe(true);
    // The app keeps its own access.
    const refreshed = await token(server, { grant_type: "refresh_token", refresh_token: grant.refreshToken, client_id: grant.app.client_id });
    expect(refreshed.status, refreshed.text).toBe(200);
  });

  it("an app no agent acts through says so; another person's agent cannot be revoked from this account", async () => {
    const grant = await personsGrant(server);
    expect(appRow(await accountPage(server, grant.person.cookie), grant.app.client_id)).toContain("None");
    const other = await personsGrant(server);
    const agent = await registerAgent(server);
    const delegated = (await exchange(agent, other.accessToken, { resource: mcp(server) })).access_token;
    const res = await postAccountForm(server, "/account/apps/agents/revoke", grant.person.cookie, { client_id: other.app.client_id, agent_id: agent.id });
    expect(res.headers.get("location")).toBe("/account/apps?error=NOT_FOUND#apps");
    expect((await introspect(server, agent, delegated)).json.active).toBe(true);
  });
});
