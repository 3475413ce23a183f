import { beforeAll, describe, expect, it } from "vitest";
import type { BrowserContext, Page } from "playwright-core";
import { axeViolations } from "../helpers/axe.js";
import { addCookies } from "../helpers/browser.js";
import { useBrowser, useTestServer } from "../helpers/fixtures.js";
import { authorize, pkce, REDIRECT, signUp, token } from "../helpers/oauth.js";
import type { TierOwnershipChecker } from "../../plugins/subscriptions/ownership.js";
import type { PaidTierId } from "../../plugins/subscriptions/tiers.js";

/**
 * The account page's analytics section: charts drawn on the server (SVG, no script: the browser
 * runs with JavaScript off), each named by its figures and followed by its data table, a plain
 * GET form to pick the client and span, and the CSV download. Below Pro the section says so.
 */
const owned = new Map<string, PaidTierId>();
const ownership: TierOwnershipChecker = {
  async ownsTierNft(userId, tier) {
    return owned.get(userId) === tier ? { nftOrigin: `${"ef".repeat(32)}_0`, walletAddress: "1PageWa11etxxxxxxxxxxxxxxxxxxxxxx" } : null;
  },
};
const server = useTestServer({ ANALYTICS_FLUSH_MS: "300000" }, { subscriptions: { ownership } });
const browser = useBrowser();
const today = () => new Date().toISOString().slice(0, 10);
const basic = (id: string, secret: string) => ({ authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString("base64")}` });

type Person = Awaited<ReturnType<typeof signUp>>;
let owner: Person;
let clientId: string;

/** The account page as `person` sees it, with JavaScript off (the axe run turns it on to inject its script). */
async function accountPage(person: Person, query = "", options: { javaScriptEnabled: boolean; bypassCSP?: boolean } = { javaScriptEnabled: false }): Promise<{ page: Page; context: BrowserContext }> {
  const context = await browser.context(options);
  await addCookies(context, person.cookie, server.url);
  const page = await context.newPage();
  await page.goto(`${server.url}/account/plan${query}#analytics`);
  return { page, context };
}

const todayRow = (page: Page, chart: string) => page.locator(`table[data-table="${chart}"] tbody tr`).filter({ has: page.locator(`th:text-is("${today()}")`) });

describe("analytics on the account page", () => {
  beforeAll(async () => {
    owner = await signUp(server);
    owned.set(owner.user.id, "pro");
    const res = await server.api("/api/auth/oauth2/register", {
      cookie: owner.cookie,
      body: { client_name: "Page Shop", redirect_uris: [REDIRECT], token_endpoint_auth_method: "client_secret_basic", grant_types: ["authorization_code", "refresh_token"], response_types: ["code"] },
    });
    expect(res.status, res.text).toBe(201);
    clientId = res.json.client_id;
    const alice = await signUp(server);
    const { verifier, challenge } = pkce();
    const auth = await authorize(server, { clientId, cookie: alice.cookie, challenge });
    const tokens = await token(server, { grant_type: "authorization_code", code: auth.code!, redirect_uri: REDIRECT, code_verifier: verifier }, basic(clientId, res.json.client_secret));
    expect(tokens.status, tokens.text).toBe(200);
    await server.flushAnalytics();
  });

  it("shows four server-drawn charts, each named by its figures and followed by its data table", async () => {
    const { page } = await accountPage(owner);
    const section = page.locator("section#analytics");
    await expect(section.locator("h2").textContent()).resolves.toBe("Analytics");
    const charts = section.locator("figure[data-chart]");
    expect(await charts.count()).toBe(4);
    for (const chart of await charts.all()) {
      const svg = chart.locator("svg[role=img]");
      const titleId = await svg.getAttribute("aria-labelledby");
      const name = await chart.locator(`svg title[id="${titleId}"]`).textContent();
      expect(name).toMatch(/ in all/);
      expect(await chart.locator("table caption").textContent()).toBe(name);
      expect(await chart.locator("table thead th[scope=col]").count()).toBeGreaterThanOrEqual(2);
      expect(await chart.locator("table tbody th[scope=row]").count()).toBe(30);
    }
    expect(await section.locator('svg title[id="chart-authorizations-name"]').textContent()).toContain("1 in all");
    expect(await todayRow(page, "authorizations").locator("td").first().textContent()).toBe("1");
    expect(await todayRow(page, "people").locator("td").first().textContent()).toBe("1");
    // The tokens table breaks the day down by grant type.
    expect(await section.locator('table[data-table="tokens"] thead th').allTextContents()).toEqual(["Day (UTC)", "Tokens issued", "authorization_code"]);
    expect(await todayRow(page, "tokens").locator("td").allTextContents()).toEqual(["1", "1"]);
    // One bar per day, today's the only one with height.
    const bars = section.locator('figure[data-chart="authorizations"] svg rect');
    expect(await bars.count()).toBe(30);
    expect(await bars.last().getAttribute("height")).not.toBe("0.0");
    expect(await bars.first().getAttribute("height")).toBe("0.0");
    await expect(section.locator("[data-totals]").textContent()).resolves.toContain("Active grants now: 1");
  });

  it("picks the span with a plain GET form, and downloads the figures as CSV", async () => {
    const { page } = await accountPage(owner);
    await page.getByLabel("Period").selectOption("7");
    await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: "Show" }).click()]);
    const url = new URL(page.url());
    expect(url.searchParams.get("analytics_days")).toBe("7");
    expect(url.searchParams.get("analytics_client")).toBe(clientId);
    expect(await page.locator('table[data-table="people"] tbody tr').count()).toBe(7);
    const href = await page.getByRole("link", { name: "Download these figures as CSV" }).getAttribute("href");
    expect(href).toBe(`/api/clients/${encodeURIComponent(clientId)}/analytics.csv?days=7`);
    const csv = await page.request.get(`${server.url}${href}`);
    expect(csv.status()).toBe(200);
    expect(csv.headers()["content-type"]).toBe("text/csv; charset=utf-8");
    expect(await csv.text()).toContain(`${today()},people,,1\r\n`);
  });

  it("says below Pro where analytics come from, and shows no chart", async () => {
    const plus = await signUp(server);
    owned.set(plus.user.id, "plus");
    const { page } = await accountPage(plus);
    const section = page.locator("section#analytics");
    await expect(section.textContent()).resolves.toContain("come with the Pro plan. Your plan is Plus.");
    expect(await section.locator("svg").count()).toBe(0);
  });

  it("is clean for axe (WCAG 2.2 AA rules)", async () => {
    const { page } = await accountPage(owner, "", { javaScriptEnabled: true, bypassCSP: true });
    expect(await axeViolations(page, ["#analytics", "#support"])).toEqual([]);
  });
});
