import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { submitWith } from "../helpers/browser.js";
import { signInThroughPage, useBrowser, useTestServer } from "../helpers/fixtures.js";
import { signUp } from "../helpers/oauth.js";
import { agentKit, ed25519, type Agent } from "../helpers/agents.js";

/**
 * The account page's Agents section in headless Chromium: a person with an enrolled host and
 * an approved agent (real Ed25519 keys) sees them and the agent's grants, and pauses, resumes
 * and revokes from the page's own forms; the agent's signed JWT feels each change at once.
 */

const server = useTestServer();
const browser = useBrowser();

const { hostJwt, agentJwt } = agentKit(() => server);

const bearer = (path: string, jwt: string, body: unknown) => server.api(path, { headers: { authorization: `Bearer ${jwt}` }, body });
const execute = async (agent: Agent, capability: string) => bearer("/api/auth/capability/execute", await agentJwt(agent), { capability });

/** A person, their host (created, then enrolled with the host's own key) and an approved agent on it. */
async function personWithAgent(capabilities: string[]) {
  const person = await signUp(server, { name: "Agent Owner" });
  const created = await server.api("/api/auth/host/create", { cookie: person.cookie, body: { name: "Build server" } });
  expect(created.status).toBe(200);
  const hostId = created.json.hostId as string;
  const hostKey = await ed25519();
  expect((await server.api("/api/auth/host/enroll", { body: { token: created.json.enrollmentToken, public_key: hostKey.jwk } })).status).toBe(200);

  const key = await ed25519();
  const registered = await bearer("/api/auth/agent/register", await hostJwt(hostId, hostKey, { agent_public_key: key.jwk }), { name: "Backup assistant", capabilities, reason: "keep your backup fresh" });
  expect(registered.status).toBe(200);
  const agent: Agent = { id: registered.json.agent_id, hostId, key };
  const approved = await server.api("/api/auth/agent/approve-capability", { cookie: person.cookie, body: { agent_id: agent.id, user_code: registered.json.approval.user_code, action: "approve" } });
  expect(approved.status).toBe(200);
  for (const capability of capabilities) expect((await execute(agent, capability)).status).toBe(200);
  const grants = await server.db.selectFrom("agentCapabilityGrant").select(["id", "capability"]).where("agentId", "=", agent.id).execute();
  const grantOf = (capability: string) => grants.find((g) => g.capability === capability)!.id as string;
  return { person, hostId, agent, grantOf };
}

/** A browser signed in as `person`, on the account page that holds the agents section. */
async function accountPage(person: { email: string; password: string }): Promise<Page> {
  const page = await browser.page();
  await page.goto(`${server.url}/account/apps`);
  await signInThroughPage(page, person);
  expect(new URL(page.url()).pathname).toBe("/account/apps");
  return page;
}

const agentsSection = (page: Page) => page.locator("section#agents");
const notice = (page: Page) => new URL(page.url()).searchParams.get("notice");
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

describe("account page: agents", () => {
  it("lists the person's host, agent and grants, and pauses, resumes and revokes from the page", async () => {
    const { person, hostId, agent, grantOf } = await personWithAgent(["profile.read", "backup.status"]);
    const page = await accountPage(person);
    const section = agentsSection(page);

    // What the section shows: the host, the agent on it, and both grants.
    const hostRow = section.locator(`tr[data-host-id="${hostId}"]`);
    await expect(hostRow.textContent()).resolves.toMatch(/Build server.*active/);
    const card = section.locator(`article[data-agent-id="${agent.id}"]`);
    await expect(card.getByRole("heading", { level: 3 }).textContent()).resolves.toMatch(/Backup assistant.*active.*delegated.*on Build server/);
    for (const capability of ["profile.read", "backup.status"]) await expect(card.locator(`tr[data-grant-id="${grantOf(capability)}"]`).textContent()).resolves.toMatch(new RegExp(`${capability.replace(".", "\\.")}.*active`));
    // Its forms carry only hidden ids; every visible field on the page is labelled.
    const unlabelled = await page.$$eval("input:not([type=hidden]), select", (els) => els.filter((el) => !(el as HTMLInputElement).labels?.length && el.getClientRects().length).map((el) => el.id || (el as HTMLInputElement).name));
    expect(unlabelled).toEqual([]);

    // Pause the agent from the page: its next execution is refused, until resumed from the page.
    await submitWith(page, "Pause agent Backup assistant");
    expect(notice(page)).toBe("agent-paused");
    expect(new URL(page.url()).hash).toBe("#agents");
    await expect(page.locator("p.notice[role=status]").textContent()).resolves.toMatch(/agent was paused/);
    await expect(card.locator("h3 [data-status]").textContent()).resolves.toBe("paused");
    const paused = await execute(agent, "profile.read");
    expect(paused.status).toBe(403);
    expect(paused.json.error).toBe("agent_paused");
    await submitWith(page, "Resume agent Backup assistant");
    expect(notice(page)).toBe("agent-resumed");
    expect((await execute(agent, "profile.read")).status).toBe(200);

    // Revoke one grant from the page: it leaves the list and the agent loses just that capability.
    await Promise.all([page.waitForNavigation(), card.locator(`tr[data-grant-id="${grantOf("backup.status")}"]`).getByRole("button", { name: "Revoke backup.status for Backup assistant" }).click()]);
    expect(notice(page)).toBe("agent-grant-revoked");
    expect(await card.locator(`tr[data-grant-id="${grantOf("backup.status")}"]`).count()).toBe(0);
    expect(await card.locator(`tr[data-grant-id="${grantOf("profile.read")}"]`).count()).toBe(1);
    const revokedGrant = await execute(agent, "backup.status");
    expect(revokedGrant.status).toBe(403);
    expect(revokedGrant.json.error).toBe("grant_revoked");
    expect((await execute(agent, "profile.read")).status).toBe(200);

    // Pausing the host stops its agent; resuming lets it act again.
    await submitWith(page, "Pause host Build server");
    expect(notice(page)).toBe("agent-host-paused");
    await expect(hostRow.locator("[data-status]").textContent()).resolves.toBe("paused");
    expect((await execute(agent, "profile.read")).json.error).toBe("host_paused");
    await submitWith(page, "Resume host Build server");
    expect(notice(page)).toBe("agent-host-resumed");
    expect((await execute(agent, "profile.read")).status).toBe(200);

    // Revoke the agent: refused for good, and no control but its status is left.
    await submitWith(page, "Revoke agent Backup assistant");
    expect(notice(page)).toBe("agent-revoked");
    await expect(card.locator("h3 [data-status]").textContent()).resolves.toBe("revoked");
    expect(await card.getByRole("button").count()).toBe(0);
    expect((await execute(agent, "profile.read")).json.error).toBe("agent_revoked");
  });

  it("revokes a host with its agents, and refuses other sites, strangers and stale changes", async () => {
    const { person, hostId, agent } = await personWithAgent(["profile.read"]);
    const stranger = await signUp(server);
    const post = (path: string, cookie: string, body: string, origin = server.url) =>
      fetch(`${server.url}/account/agents${path}`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", cookie, origin }, body, redirect: "manual" });

    // Another site's form, even with the owner's cookie: refused, nothing changes.
    expect((await post("/agents/pause", person.cookie, form({ agent_id: agent.id }), "https://evil.example")).status).toBe(403);
    // Someone else's session: as if it did not exist.
    for (const [path, body] of [["/agents/pause", { agent_id: agent.id }], ["/hosts/revoke", { host_id: hostId }]] as const) {
      const res = await post(path, stranger.cookie, form(body));
      expect(res.status).toBe(303);
      expect(res.headers.get("location")).toBe("/account/apps?error=NOT_FOUND#agents");
    }
    expect((await execute(agent, "profile.read")).status).toBe(200);

    // A change that no longer applies (resuming an active agent) says so.
    const stale = await post("/agents/resume", person.cookie, form({ agent_id: agent.id }));
    expect(stale.headers.get("location")).toBe("/account/apps?error=INVALID_STATE#agents");

    // The owner revokes the host from the page: the agent on it goes too.
    const page = await accountPage(person);
    await submitWith(page, "Revoke host Build server");
    expect(notice(page)).toBe("agent-host-revoked");
    await expect(agentsSection(page).locator(`tr[data-host-id="${hostId}"] [data-status]`).textContent()).resolves.toBe("revoked");
    await expect(agentsSection(page).locator(`article[data-agent-id="${agent.id}"] h3 [data-status]`).textContent()).resolves.toBe("revoked");
    expect((await execute(agent, "profile.read")).json.error).toBe("agent_revoked");
    // Unknown notice keys are not echoed; only the fixed words appear.
    await page.goto(`${server.url}/account/apps?notice=agent-owned#agents`);
    expect(await page.locator("p.notice").count()).toBe(0);
  });
});
