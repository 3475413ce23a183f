import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { axeViolations } from "../helpers/axe.js";
import { newIdentity, signRequest } from "../helpers/bap.js";
import { fillByLabel, submitWith } from "../helpers/browser.js";
import { signUpWithForm, useBrowser, useTestServer } from "../helpers/fixtures.js";
import { authorize, pkce, registerClient } from "../helpers/oauth.js";
import { cookiesOf, uniqueEmail } from "../helpers/server.js";

/**
 * The account area as pages: a short overview at /account and one page per group of sections,
 * each with a navigation that marks where the person is, each axe clean in Chromium, each form
 * coming back to the page it was posted from (with JavaScript off too), and every link from
 * before the split (e-mails, Stripe's return address, `/account#section`) still arriving.
 */
const server = useTestServer();
const browser = useBrowser();

const PAGES = [
  { path: "/account/security", title: "Profile and security", sections: ["profile", "sessions", "accounts", "passkeys", "two-factor"] },
  { path: "/account/identities", title: "Identities, wallets and NFTs", sections: ["identities", "wallets", "nfts"] },
  { path: "/account/apps", title: "Apps, agents and delegations", sections: ["apps", "agents", "approvals"] },
  { path: "/account/organizations", title: "Organizations", sections: ["organizations"] },
  { path: "/account/plan", title: "Plan, billing, branding and analytics", sections: ["subscription", "branding", "analytics", "support"] },
];
const EVERY_SECTION = PAGES.flatMap((p) => p.sections);

/** The navigation's links, and which one says it is the current page. */
async function navigation(page: Page) {
  const nav = page.getByRole("navigation", { name: "Account" });
  const links = await nav.getByRole("link").evaluateAll((els) => els.map((a) => ({ href: a.getAttribute("href"), current: a.getAttribute("aria-current") })));
  return { hrefs: links.map((l) => l.href), current: links.filter((l) => l.current !== null) };
}

const sectionIds = (page: Page) => page.$$eval("main section[id]", (els) => els.map((s) => s.id));

/** A person with something to show on every page: a BAP identity, an authorized app, an organization. */
async function personWithData(page: Page) {
  const person = await signUpWithForm(server, page, { name: "Pages Person", email: uniqueEmail("pages") });
  const signedIn = await server.api("/api/auth/sign-in/email", { body: { email: person.email, password: person.password } });
  const cookie = cookiesOf(signedIn.headers);
  const id = newIdentity();
  const body = JSON.stringify({ bapId: id.bapId, name: "Pages identity" });
  expect((await server.api("/api/user/bap-ids", { cookie, body, headers: { "x-auth-token": signRequest(id.key, "/api/user/bap-ids", body) } })).status).toBe(201);
  const client = await registerClient(server, { client_name: "Pages App" });
  const granted = await authorize(server, { clientId: client.client_id, cookie, challenge: pkce().challenge, scope: "openid email" });
  expect(granted.code).toBeTruthy();
  expect((await server.api("/api/auth/organization/create", { cookie, body: { name: "Pages Org", slug: `pages-org-${Date.now()}` } })).status).toBe(200);
  return { ...person, cookie };
}

describe("account pages", () => {
  it("shows an overview and five pages, each marking itself in the navigation, holding its own sections only, and axe clean", async () => {
    const page = await browser.page();
    await personWithData(page);

    // Signing up lands on /, the overview: every page, and every section as a link into it.
    expect(new URL(page.url()).pathname).toBe("/");
    await page.goto(`${server.url}/account`);
    await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe("Your account");
    let nav = await navigation(page);
    expect(nav.hrefs).toEqual(["/account", ...PAGES.map((p) => p.path)]);
    expect(nav.current).toEqual([{ href: "/account", current: "page" }]);
    expect(await sectionIds(page)).toEqual([]);
    for (const p of PAGES) {
      for (const id of p.sections) expect(await page.locator(`li#${id} a`).getAttribute("href")).toBe(`${p.path}#${id}`);
      expect(await page.getByRole("heading", { level: 2, name: p.title }).getByRole("link").getAttribute("href")).toBe(p.path);
    }
    expect(await axeViolations(page)).toEqual([]);
    // The check can fail: an unlabelled field is found.
    await page.evaluate(() => document.querySelector("main")!.append(Object.assign(document.createElement("input"), { type: "text" })));
    expect((await axeViolations(page)).some((v) => v.startsWith("label:"))).toBe(true);

    for (const p of PAGES) {
      await page.goto(`${server.url}${p.path}`);
      expect(new URL(page.url()).pathname).toBe(p.path);
      await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe(p.title);
      await expect(page.title()).resolves.toBe(`${p.title} · Your account`);
      nav = await navigation(page);
      expect(nav.current).toEqual([{ href: p.path, current: "page" }]);
      // Its sections, in order, and none of another page's.
      expect(await sectionIds(page)).toEqual(p.sections);
      for (const id of EVERY_SECTION.filter((s) => !p.sections.includes(s))) expect(await page.locator(`section#${id}`).count()).toBe(0);
      expect(await axeViolations(page), p.path).toEqual([]);
    }

    // The data each page reads is its own.
    await page.goto(`${server.url}/account/identities`);
    await expect(page.locator("section#identities").textContent()).resolves.toContain("Pages identity");
    await page.goto(`${server.url}/account/apps`);
    await expect(page.locator("section#apps").textContent()).resolves.toContain("Pages App");
    await page.goto(`${server.url}/account/organizations`);
    await expect(page.locator("section#organizations").textContent()).resolves.toMatch(/Pages Org.*you are owner/);

    // A page's answer with a notice is axe clean too, and the navigation still says where.
    await page.goto(`${server.url}/account/security`);
    await fillByLabel(page, "Name", "Renamed Pages Person");
    await submitWith(page, "Save name");
    const back = new URL(page.url());
    expect(`${back.pathname}${back.search}${back.hash}`).toBe("/account/security?notice=name-changed#profile");
    await expect(page.locator("p.notice[role=status]").textContent()).resolves.toBe("Your name was changed.");
    expect((await navigation(page)).current).toEqual([{ href: "/account/security", current: "page" }]);
    expect(await axeViolations(page)).toEqual([]);
  });

  it("an old /account#section link shows that section's entry on the overview, which leads to its page", async () => {
    const page = await browser.page();
    await personWithData(page);
    await page.goto(`${server.url}/account#agents`);
    expect(new URL(page.url()).pathname).toBe("/account");
    const entry = page.locator("li#agents");
    await expect(entry.evaluate((el) => el.matches(":target"))).resolves.toBe(true);
    await Promise.all([page.waitForURL((u) => u.pathname === "/account/apps"), entry.getByRole("link").click()]);
    expect(new URL(page.url()).hash).toBe("#agents");
    await expect(page.locator("section#agents h2").textContent()).resolves.toBe("Agents");
  });

  it("forms work without JavaScript and come back to the page they were posted from", async () => {
    const page = await browser.page({ javaScriptEnabled: false });
    await personWithData(page);

    await page.goto(`${server.url}/account/organizations`);
    await fillByLabel(page, "Organization name", "No Script Org");
    await submitWith(page, "Create organization");
    let back = new URL(page.url());
    expect(`${back.pathname}${back.search}${back.hash}`).toBe("/account/organizations?notice=organization-created#organizations");
    await expect(page.locator("p.notice[role=status]").textContent()).resolves.toBe("The organization was created.");
    await expect(page.locator("section#organizations").textContent()).resolves.toContain("No Script Org");

    // An error comes back to the same page, in its words.
    await page.goto(`${server.url}/account/security`);
    await fillByLabel(page, "New e-mail address", uniqueEmail("nojs"));
    await fillByLabel(page, "Your password", "not the password");
    await submitWith(page, "Change e-mail");
    back = new URL(page.url());
    expect(back.pathname).toBe("/account/security");
    expect(back.hash).toBe("#profile");
    await expect(page.getByRole("alert").textContent()).resolves.toContain("That password is not right.");
  });

  it("keeps links from before the pages working: outcomes go on to their page, and each page asks a signed-out visitor to sign in and come back", async () => {
    const { cookie } = await personWithData(await browser.page());
    const get = (path: string) => fetch(`${server.url}${path}`, { headers: { cookie }, redirect: "manual" });

    // Stripe Checkout's return addresses (plugins/subscriptions/checkout.ts) and the e-mail change link's.
    for (const [from, to] of [
      ["/account?subscription=success", "/account/plan?subscription=success"],
      ["/account?subscription=cancelled", "/account/plan?subscription=cancelled"],
      ["/account?notice=email-changed", "/account/security?notice=email-changed"],
      ["/account?notice=app-revoked", "/account/apps?notice=app-revoked"],
      ["/account?notice=wallet-connected", "/account/identities?notice=wallet-connected"],
      ["/account?notice=invitation-accepted", "/account/organizations?notice=invitation-accepted"],
    ]) {
      const res = await get(from!);
      expect(res.status, from).toBe(303);
      expect(res.headers.get("location"), from).toBe(to);
    }
    const plan = await (await get("/account/plan?subscription=cancelled")).text();
    expect(plan).toContain("The checkout was cancelled. You were not charged.");

    // An error or an unknown notice stays on the overview, shown only when known.
    const overview = await get("/account?error=LINK_FAILED");
    expect(overview.status).toBe(200);
    expect(await overview.text()).toContain("Linking that account did not finish. Try again.");
    expect((await get("/account?notice=nothing-of-ours")).status).toBe(200);

    for (const p of PAGES) {
      const res = await fetch(`${server.url}${p.path}`, { redirect: "manual" });
      expect(res.status).toBe(303);
      expect(res.headers.get("location")).toBe(`/sign-in?return_to=${encodeURIComponent(p.path)}`);
      const signedIn = await get(p.path);
      expect(signedIn.status).toBe(200);
      expect(signedIn.headers.get("cache-control")).toBe("no-store");
    }
  });
});
