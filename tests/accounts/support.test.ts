import { describe, expect, it } from "vitest";
import { axeViolations } from "../helpers/axe.js";
import { addCookies, fillByLabel, submitWith } from "../helpers/browser.js";
import { useBrowser, useTestServer } from "../helpers/fixtures.js";
import { mailbox } from "../helpers/mailbox.js";
import { signUp } from "../helpers/oauth.js";
import { postForm, type TestServer } from "../helpers/server.js";
import type { TierOwnershipChecker } from "../../plugins/subscriptions/ownership.js";
import type { PaidTierId } from "../../plugins/subscriptions/tiers.js";

/**
 * "Contact support" on the account page (Plus and Pro): a plain form (JavaScript off here) that
 * mails SUPPORT_EMAIL with the tier in the subject, Pro marked priority, and the person a copy;
 * guarded like every account form (same origin, session), limited per person. The free plan
 * sees the docs and /llms.txt instead; without SUPPORT_EMAIL the section says so.
 */
const SUPPORT = "help@support.example.com";
const owned = new Map<string, PaidTierId>();
const ownership: TierOwnershipChecker = {
  async ownsTierNft(userId, tier) {
    return owned.get(userId) === tier ? { nftOrigin: `${"12".repeat(32)}_0`, walletAddress: "1SupportWa11etxxxxxxxxxxxxxxxxxx" } : null;
  },
};
const box = mailbox();
const server = useTestServer({ SUPPORT_EMAIL: SUPPORT }, { subscriptions: { ownership }, mailer: box.mailer });
const unconfigured = useTestServer({}, { subscriptions: { ownership }, mailer: box.mailer });
const limited = useTestServer({ SUPPORT_EMAIL: SUPPORT, RATE_LIMIT_ENABLED: "true" }, { subscriptions: { ownership }, mailer: box.mailer });
const browser = useBrowser();

type Person = Awaited<ReturnType<typeof signUp>>;
async function member(on: TestServer, tier: PaidTierId | "free") {
  const person = await signUp(on, { name: "Ada Member" });
  if (tier !== "free") owned.set(person.user.id, tier);
  return person;
}
const send = (on: TestServer, person: Person, fields: Record<string, string>, origin = on.url) => postForm(on, "/account/support", fields, { cookie: person.cookie, origin });
const supportMails = (topic: string) => box.mails.filter((m) => m.to === SUPPORT && m.subject.endsWith(topic));

async function accountPage(on: TestServer, person: Person) {
  const context = await browser.context({ javaScriptEnabled: false });
  await addCookies(context, person.cookie, on.url);
  const page = await context.newPage();
  await page.goto(`${on.url}/account/plan#support`);
  return page;
}

describe("contact support", () => {
  it("sends a Plus member's message from the page, without JavaScript, to SUPPORT_EMAIL and a copy to them", async () => {
    const person = await member(server, "plus");
    const page = await accountPage(server, person);
    await fillByLabel(page, "Topic", "Redirect URI question");
    await fillByLabel(page, "Message", "How do I register two redirect URIs?\nThanks.");
    await submitWith(page, "Send to support");
    const back = new URL(page.url());
    expect(back.pathname).toBe("/account/plan");
    expect(back.searchParams.get("notice")).toBe("support-sent");
    await expect(page.locator(".notice").textContent()).resolves.toContain("Your message was sent to support");
    const mail = await box.latest(SUPPORT, /Redirect URI question$/);
    expect(mail.subject).toBe("[Plus] Redirect URI question");
    expect(mail.replyTo).toBe(person.email);
    expect(mail.text).toContain(`Ada Member <${person.email}>`);
    expect(mail.text).toContain("Plus plan");
    expect(mail.text).toContain("How do I register two redirect URIs?\nThanks.");
    const copy = await box.latest(person.email, /^Your message to support: Redirect URI question$/);
    expect(copy.text).toContain("How do I register two redirect URIs?");
  });

  it("marks a Pro member's message priority", async () => {
    const person = await member(server, "pro");
    const res = await send(server, person, { topic: "Token lifetime", message: "Can access tokens last 2 hours?" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/account/plan?notice=support-sent#support");
    expect(supportMails("Token lifetime").map((m) => m.subject)).toEqual(["[Pro, priority] Token lifetime"]);
    expect(box.count(person.email)).toBe(1);
  });

  it("shows the free plan the docs and /llms.txt instead of a form, and refuses its post", async () => {
    const person = await member(server, "free");
    const page = await accountPage(server, person);
    const section = page.locator("section#support");
    expect(await section.getByRole("link", { name: "API reference" }).getAttribute("href")).toBe("/api/reference");
    expect(await section.getByRole("link", { name: "/llms.txt" }).getAttribute("href")).toBe("/llms.txt");
    expect(await section.locator("form").count()).toBe(0);
    const res = await send(server, person, { topic: "Free question", message: "Hello" });
    expect(res.headers.get("location")).toBe("/account/plan?error=TIER_REQUIRED#support");
    expect(supportMails("Free question")).toHaveLength(0);
    expect(box.count(person.email)).toBe(0);
  });

  it("says so instead of the form when SUPPORT_EMAIL is not set", async () => {
    const person = await member(unconfigured, "pro");
    const page = await accountPage(unconfigured, person);
    const section = page.locator("section#support");
    await expect(section.textContent()).resolves.toContain("Support by e-mail is not set up on this server");
    expect(await section.locator("form").count()).toBe(0);
    const res = await send(unconfigured, person, { topic: "Nowhere", message: "Hello" });
    expect(res.headers.get("location")).toBe("/account/plan?error=SUPPORT_NOT_CONFIGURED#support");
    expect(box.count(person.email)).toBe(0);
  });

  it("refuses a post from another site, an empty message and a topic that would add a mail header", async () => {
    const person = await member(server, "plus");
    const foreign = await send(server, person, { topic: "Forged", message: "Hello" }, "https://evil.example");
    expect(foreign.status).toBe(403);
    for (const fields of [{ topic: "Empty", message: "   " }, { topic: "Bad\r\nBcc: victim@example.com", message: "Hello" }, { topic: "x".repeat(151), message: "Hello" }]) {
      const res = await send(server, person, fields);
      expect(res.headers.get("location"), JSON.stringify(fields)).toBe("/account/plan?error=INVALID_INPUT#support");
    }
    expect(box.count(person.email)).toBe(0);
    expect(box.mails.some((m) => m.subject.includes("Forged") || m.subject.includes("Bcc"))).toBe(false);
  });

  it("the form and the free plan's links are clean for axe (WCAG 2.2 AA rules)", async () => {
    for (const tier of ["pro", "free"] as const) {
      const person = await member(server, tier);
      const context = await browser.context({ bypassCSP: true });
      await addCookies(context, person.cookie, server.url);
      const page = await context.newPage();
      await page.goto(`${server.url}/account/plan#support`);
      expect(await axeViolations(page, ["#support"]), tier).toEqual([]);
    }
  });

  it("is limited per person: past the budget the page says to wait and nothing is sent", async () => {
    const person = await member(limited, "plus");
    const answers: string[] = [];
    for (let i = 1; i <= 4; i++) answers.push((await send(limited, person, { topic: `Limited ${i}`, message: "Hello" })).headers.get("location") ?? "");
    expect(answers).toEqual([...Array(3).fill("/account/plan?notice=support-sent#support"), "/account/plan?error=RATE_LIMITED#support"]);
    expect(supportMails("Limited 4")).toHaveLength(0);
    expect(box.count(person.email)).toBe(3);
  });
});
