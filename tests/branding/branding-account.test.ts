import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { axeViolations } from "../helpers/axe.js";
import { addCookies, fillByLabel } from "../helpers/browser.js";
import { brandingPath, ownerWithClient, PNG_1PX, tierHolders } from "../helpers/branding.js";
import { useBrowser, useTestServer } from "../helpers/fixtures.js";
import { useHttpsServer } from "../helpers/https-server.js";

/**
 * The account page's branding section, in headless Chromium: a Plus owner
 * sets and removes a client's brand with plain forms (no script involved) (the API's rules, refusals in words), a
 * free owner is told what Plus and Pro give.
 */
const https = useHttpsServer();
const holders = tierHolders();
const server = useTestServer(() => ({ OUTBOUND_ALLOW_PRIVATE: "true", OUTBOUND_EXTRA_CA_FILE: https.caFile }), { subscriptions: { ownership: holders.ownership } });
const browser = useBrowser();

async function accountPage(cookie: string): Promise<Page> {
  const context = await browser.context();
  await addCookies(context, cookie, server.url);
  const page = await context.newPage();
  await page.goto(`${server.url}/account/plan#branding`);
  return page;
}

const section = (page: Page) => page.locator("#branding");
async function press(page: Page, name: string) {
  await Promise.all([page.waitForNavigation({ waitUntil: "load" }), page.getByRole("button", { name, exact: true }).click()]);
}

describe("the account page's branding section", () => {
  it("a Plus owner sets a client's brand, is told why a colour is refused, and removes it", async () => {
    https.serve("/acct.png", { status: 200, headers: { "content-type": "image/png" }, body: PNG_1PX });
    const owner = await ownerWithClient(server, holders, "plus", { client_name: "Shop App" });
    const page = await accountPage(owner.cookie);
    await expect(section(page).getByRole("heading", { name: "Shop App" }).count()).resolves.toBe(1);
    expect(await axeViolations(page, "#branding")).toEqual([]);

    await fillByLabel(page, "Name shown", "Shop & Co");
    await fillByLabel(page, "Logo address (https; PNG, JPEG or WebP)", `https://localhost:${https.port}/acct.png`);
    await fillByLabel(page, "Accent colour (#rrggbb, at least 4.5:1 against white)", "#ffcc00");
    await press(page, "Save brand for Shop App");
    expect(await page.locator("main > p.error").innerText()).toContain("contrast ratio of at least 4.5:1");
    expect((await server.api(brandingPath(owner.clientId), { cookie: owner.cookie })).status).toBe(404);

    await fillByLabel(page, "Name shown", "Shop & Co");
    await fillByLabel(page, "Logo address (https; PNG, JPEG or WebP)", `https://localhost:${https.port}/acct.png`);
    await fillByLabel(page, "Accent colour (#rrggbb, at least 4.5:1 against white)", "#14532d");
    await fillByLabel(page, "Support link (https or mailto:)", "mailto:help@shop.example");
    await press(page, "Save brand for Shop App");
    expect(await page.locator("p.notice").innerText()).toBe("The brand was saved.");
    const saved = await server.api(brandingPath(owner.clientId), { cookie: owner.cookie });
    expect(saved.json).toMatchObject({ displayName: "Shop & Co", accentColor: "#14532d", supportUrl: "mailto:help@shop.example", shown: true });
    expect(saved.json.logoUrl).toMatch(/\/branding\/logo\?v=/);
    // The form shows what is stored.
    expect(await page.getByLabel("Name shown").inputValue()).toBe("Shop & Co");

    await press(page, "Remove brand for Shop App");
    expect(await page.locator("p.notice").innerText()).toBe("The brand was removed.");
    expect((await server.api(brandingPath(owner.clientId), { cookie: owner.cookie })).status).toBe(404);
  });

  it("a free owner sees what Plus and Pro give, and no form", async () => {
    const owner = await ownerWithClient(server, holders, "free", { client_name: "Free App" });
    const page = await accountPage(owner.cookie);
    expect(await section(page).innerText()).toContain("With Plus they show your brand");
    expect(await section(page).locator("form").count()).toBe(0);
    expect(await axeViolations(page, "#branding")).toEqual([]);
  });
});
