import type { Page, Request } from "playwright-core";
import { describe, expect, it } from "vitest";
import { saveBrand } from "../../plugins/branding/store.js";
import { axeViolations } from "../helpers/axe.js";
import { addCookies, fillByLabel, submitWith } from "../helpers/browser.js";
import { brandingPath, ownerWithClient, PNG_1PX, tierHolders } from "../helpers/branding.js";
import { signInThroughPage, useBrowser, useTestServer } from "../helpers/fixtures.js";
import { useHttpsServer } from "../helpers/https-server.js";
import { mailbox } from "../helpers/mailbox.js";
import { authorizationRequest, signUp } from "../helpers/oauth.js";
import { cookiesOf, uniqueEmail, type TestServer } from "../helpers/server.js";
import { secretOf, totp } from "../helpers/totp.js";

/**
 * The brand on the pages of an authorization flow, in headless Chromium: a Plus owner's client
 * shows its brand beside our name, a Pro owner's (white-label) shows no trace of ours, a free
 * owner's the standard look. Every page loads images from our own origin only and axe finds
 * nothing. The flow's e-mails (reset, verification) carry the brand too.
 */
const OUR_NAME = "Examplar ID";
const PRIVACY = "https://legal.examplar.example/privacy";
const THIRD_PARTY_ICON = "https://cdn.thirdparty.example/icon.png";
const ACCENT = "#1d4ed8";

const https = useHttpsServer();
const holders = tierHolders();
const box = mailbox();
const env = () => ({ OUTBOUND_ALLOW_PRIVATE: "true", OUTBOUND_EXTRA_CA_FILE: https.caFile, SERVICE_DISPLAY_NAME: OUR_NAME, PRIVACY_POLICY_URL: PRIVACY });
const server = useTestServer(env, { subscriptions: { ownership: holders.ownership }, mailer: box.mailer });
const browser = useBrowser();

/** A client of a `tier` owner with its brand set through the API (a registered icon elsewhere, which no branded page may load). */
async function brandedClient(s: TestServer, tier: "plus" | "pro", displayName: string) {
  https.serve("/brand.png", { status: 200, headers: { "content-type": "image/png" }, body: PNG_1PX });
  const owner = await ownerWithClient(s, holders, tier, { client_name: "Registered Name", logo_uri: THIRD_PARTY_ICON });
  const res = await s.api(brandingPath(owner.clientId), {
    method: "PUT",
    cookie: owner.cookie,
    body: { displayName, logoUri: `https://localhost:${https.port}/brand.png`, accentColor: ACCENT, supportUrl: "https://help.brand.example/" },
  });
  expect(res.status, res.text).toBe(200);
  return owner.clientId;
}

/** A fresh browser at the authorization request of `clientId`: our sign-in page. Every request the page makes is recorded. */
async function arrive(s: TestServer, clientId: string) {
  const page = await browser.page();
  const requests: Request[] = [];
  page.on("request", (r) => requests.push(r));
  await page.goto(authorizationRequest(s, clientId, { scope: "openid profile" }).url);
  expect(new URL(page.url()).pathname).toBe("/sign-in");
  return { page, requests };
}

/** What a person sees of the page: its title and all its text. */
const seen = async (page: Page) => `${await page.title()}\n${await page.locator("body").innerText()}`;

async function expectBrandShown(page: Page, displayName: string) {
  const header = page.getByRole("banner");
  await expect(header.innerText()).resolves.toContain(displayName);
  const logo = header.locator("img");
  expect(await logo.getAttribute("src")).toMatch(/^\/api\/clients\/[^/]+\/branding\/logo\?v=/);
  // The image really loaded, from us.
  expect(await logo.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true);
  expect(await page.title()).toContain(displayName);
  // The accent on the primary button (white text on it: 6.7:1).
  const background = await page.getByRole("button", { name: /^(Sign in|Allow|Verify)$/ }).first().evaluate((b) => getComputedStyle(b).backgroundColor);
  expect(background).toBe("rgb(29, 78, 216)");
  await expect(page.getByRole("link", { name: `${displayName} support` }).getAttribute("href")).resolves.toBe("https://help.brand.example/");
}

function expectOnlyOwnOrigin(s: TestServer, requests: Request[]) {
  const elsewhere = requests.map((r) => r.url()).filter((url) => new URL(url).origin !== new URL(s.url).origin && !url.startsWith("http://127.0.0.1:9999/"));
  expect(elsewhere).toEqual([]);
}

describe("a Plus owner's client: its brand beside our name", () => {
  it("on the sign-in page and the consent page, axe clean", async () => {
    const clientId = await brandedClient(server, "plus", "Acme Books");
    const person = await signUp(server);
    const { page, requests } = await arrive(server, clientId);
    await expectBrandShown(page, "Acme Books");
    expect(await page.getByRole("contentinfo").innerText()).toContain(`Sign-in for Acme Books by ${OUR_NAME}`);
    expect(await axeViolations(page)).toEqual([]);

    await signInThroughPage(page, person);
    expect(new URL(page.url()).pathname).toBe("/consent");
    await expect(page.getByRole("heading", { level: 1 }).innerText()).resolves.toBe("Acme Books wants to access your account");
    await expectBrandShown(page, "Acme Books");
    expect(await axeViolations(page)).toEqual([]);
    expectOnlyOwnOrigin(server, requests);
  });
});

describe("a Pro owner's client: white-label", () => {
  it("sign-in and consent pages carry the brand and no trace of our name (title, header, footer), keeping the legal links; axe clean", async () => {
    const clientId = await brandedClient(server, "pro", "Nimbus Notes");
    const person = await signUp(server);
    const { page, requests } = await arrive(server, clientId);
    await expectBrandShown(page, "Nimbus Notes");
    expect(await seen(page)).not.toContain(OUR_NAME);
    expect(await page.getByRole("link", { name: "Privacy" }).getAttribute("href")).toBe(PRIVACY);
    expect(await axeViolations(page)).toEqual([]);
    await page.screenshot({ path: `${process.env.TMPDIR ?? "/tmp"}/branding-white-label-sign-in.png` });

    await signInThroughPage(page, person);
    expect(new URL(page.url()).pathname).toBe("/consent");
    await expectBrandShown(page, "Nimbus Notes");
    const consent = await seen(page);
    expect(consent).toContain("Nimbus Notes wants to access your account");
    expect(consent).not.toContain(OUR_NAME);
    expect(consent).not.toContain("Registered Name");
    expect(await axeViolations(page)).toEqual([]);
    expectOnlyOwnOrigin(server, requests);

    // The error page, named for the client, is white-label too.
    await page.goto(`${server.url}/error?error=access_denied&client_id=${encodeURIComponent(clientId)}`);
    await expect(page.getByRole("banner").innerText()).resolves.toContain("Nimbus Notes");
    expect(await seen(page)).not.toContain(OUR_NAME);
    expect(await axeViolations(page)).toEqual([]);
  });
});

describe("the two-factor step of a Plus client's flow", () => {
  it("keeps the brand from sign-in to the code step to consent; axe clean", async () => {
    const clientId = await brandedClient(server, "plus", "Acme Books");
    const person = await signUp(server);
    const enabled = await server.api("/api/auth/two-factor/enable", { cookie: person.cookie, body: { password: person.password } });
    const secret = secretOf(enabled.json.totpURI);
    expect((await server.api("/api/auth/two-factor/verify-totp", { cookie: cookiesOf(enabled.headers) || person.cookie, body: { code: totp(secret) } })).status).toBe(200);

    const { page } = await arrive(server, clientId);
    await signInThroughPage(page, person);
    expect(new URL(page.url()).pathname).toBe("/sign-in/two-factor");
    await expectBrandShown(page, "Acme Books");
    expect(await axeViolations(page)).toEqual([]);
    await fillByLabel(page, "Code from your authenticator app", totp(secret));
    await submitWith(page, "Verify");
    expect(new URL(page.url()).pathname).toBe("/consent");
    await expectBrandShown(page, "Acme Books");
  });
});

describe("the device page (RFC 8628) of a white-label client", () => {
  it("shows the brand on the confirm step, and no trace of our name; axe clean", async () => {
    https.serve("/device.png", { status: 200, headers: { "content-type": "image/png" }, body: PNG_1PX });
    const owner = await ownerWithClient(server, holders, "pro", {
      client_name: "Registered TV",
      redirect_uris: undefined,
      grant_types: ["urn:ietf:params:oauth:grant-type:device_code"],
      response_types: [],
    });
    const set = await server.api(brandingPath(owner.clientId), { method: "PUT", cookie: owner.cookie, body: { displayName: "Nimbus TV", logoUri: `https://localhost:${https.port}/device.png`, accentColor: ACCENT } });
    expect(set.status, set.text).toBe(200);
    const code = await fetch(`${server.url}/api/auth/device/code`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ client_id: owner.clientId, scope: "openid" }) });
    const { user_code: userCode } = (await code.json()) as { user_code: string };
    const person = await signUp(server);
    const context = await browser.context();
    await addCookies(context, person.cookie, server.url);
    const page = await context.newPage();
    await page.goto(`${server.url}/device?user_code=${userCode}`);
    await expect(page.getByRole("heading", { level: 1 }).innerText()).resolves.toBe("Connect Nimbus TV?");
    await expect(page.getByRole("banner").innerText()).resolves.toContain("Nimbus TV");
    const text = await seen(page);
    expect(text).not.toContain(OUR_NAME);
    expect(text).not.toContain("Registered TV");
    expect(await axeViolations(page)).toEqual([]);
  });
});

describe("the error page the authorize endpoint sends a browser to", () => {
  it("names the client, so a white-label client's error page shows its brand and not ours", async () => {
    const clientId = await brandedClient(server, "pro", "Nimbus Notes");
    const page = await browser.page();
    // A redirect URI the client never registered: oauth-provider refuses to send the browser there.
    await page.goto(authorizationRequest(server, clientId, { redirectUri: "http://127.0.0.1:9999/not-registered" }).url);
    const landed = new URL(page.url());
    expect(landed.pathname).toBe("/error");
    expect(landed.searchParams.get("client_id")).toBe(clientId);
    await expect(page.getByRole("banner").innerText()).resolves.toContain("Nimbus Notes");
    expect(await seen(page)).not.toContain(OUR_NAME);
    expect(await axeViolations(page)).toEqual([]);
  });
});

describe("a free owner's client: the standard look", () => {
  it("shows our name and the registered client name only, even with a brand kept from a lapsed tier", async () => {
    const owner = await ownerWithClient(server, holders, "free", { client_name: "Registered Name" });
    // A brand stored while the owner held Plus: kept, not shown.
    await saveBrand(server.db, owner.clientId, { displayName: "Kept Brand", logoUri: null, accentColor: ACCENT, supportUrl: null }, null);
    const { page } = await arrive(server, owner.clientId);
    const text = await seen(page);
    expect(text).not.toContain("Kept Brand");
    expect(await page.getByRole("banner").count()).toBe(0);
    expect(await page.title()).toBe("Sign in");
    expect(await page.getByRole("contentinfo").innerText()).toContain(OUR_NAME);
    expect(await axeViolations(page)).toEqual([]);
  });
});

describe("the flow's e-mails", () => {
  /** "Forgot your password?" from the sign-in page of `clientId`'s request, for `email`. */
  async function resetFromFlow(clientId: string, email: string) {
    const { page } = await arrive(server, clientId);
    await Promise.all([page.waitForNavigation({ waitUntil: "load" }), page.getByRole("link", { name: "Forgot your password?" }).click()]);
    expect(new URL(page.url()).pathname).toBe("/forgot-password");
    await fillByLabel(page, "E-mail", email);
    await submitWith(page, "Send reset link");
    return page;
  }

  it("the reset mail of a Plus flow carries the brand under our sender; of a Pro flow, the client's name as sender", async () => {
    const plus = await brandedClient(server, "plus", "Acme Books");
    const person = await signUp(server);
    const page = await resetFromFlow(plus, person.email);
    await expectBrandShownLite(page, "Acme Books");
    const mail = await box.latest(person.email, /Reset your password/);
    expect(mail.subject).toBe("Acme Books: Reset your password");
    expect(mail.text).toContain("https://help.brand.example/");
    expect(mail.fromName).toBeUndefined();

    const pro = await brandedClient(server, "pro", "Nimbus Notes");
    const other = await signUp(server);
    await resetFromFlow(pro, other.email);
    const white = await box.latest(other.email, /Reset your password/);
    expect(white.subject).toBe("Nimbus Notes: Reset your password");
    expect(white.fromName).toBe("Nimbus Notes");
    expect(`${white.subject}\n${white.text}`).not.toContain(OUR_NAME);
  });

  it("a reset asked outside any flow is the standard mail", async () => {
    const person = await signUp(server);
    const page = await browser.page();
    await page.goto(`${server.url}/forgot-password`);
    await fillByLabel(page, "E-mail", person.email);
    await submitWith(page, "Send reset link");
    const mail = await box.latest(person.email, /Reset your password/);
    expect(mail.subject).toBe("Reset your password");
    expect(mail.fromName).toBeUndefined();
  });
});

describe("the verification mail of a sign-up in the flow (REQUIRE_EMAIL_VERIFICATION=true)", () => {
  const verifying = useTestServer(() => ({ ...env(), REQUIRE_EMAIL_VERIFICATION: "true" }), { subscriptions: { ownership: holders.ownership }, mailer: box.mailer });

  it("carries the white-label brand, sent under the client's name; the sign-up page shows it", async () => {
    const clientId = await brandedClient(verifying, "pro", "Nimbus Notes");
    const { page } = await arrive(verifying, clientId);
    await Promise.all([page.waitForNavigation({ waitUntil: "load" }), page.getByRole("link", { name: "Create one" }).click()]);
    expect(new URL(page.url()).pathname).toBe("/sign-up");
    await expectBrandShownLite(page, "Nimbus Notes");
    expect(await seen(page)).not.toContain(OUR_NAME);
    expect(await axeViolations(page)).toEqual([]);
    const email = uniqueEmail("brand");
    await fillByLabel(page, "Name", "Brand Person");
    await fillByLabel(page, "E-mail", email);
    await fillByLabel(page, "Password", "correct horse battery staple");
    await submitWith(page, "Create account");
    const mail = await box.latest(email, /Verify your e-mail/);
    expect(mail.subject).toBe("Nimbus Notes: Verify your e-mail");
    expect(mail.fromName).toBe("Nimbus Notes");
    expect(mail.text).toContain("https://help.brand.example/");
  });
});

/** The brand's header and title (pages without the primary buttons expectBrandShown looks at). */
async function expectBrandShownLite(page: Page, displayName: string) {
  await expect(page.getByRole("banner").innerText()).resolves.toContain(displayName);
  expect(await page.title()).toContain(displayName);
}
