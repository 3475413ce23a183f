import { randomBytes } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import type { PaidTierId } from "../../plugins/subscriptions/tiers.js";
import { txo } from "../helpers/ordinals.js";
import { personWithWallets, useBillingStack, type BillingStack } from "../helpers/billing.js";
import { signUp } from "../helpers/oauth.js";
import { addCookies } from "../helpers/browser.js";
import { useBrowser } from "../helpers/fixtures.js";
import { postForm, type TestServer } from "../helpers/server.js";
import { paymentOf, signedEvent, until, webhook } from "../helpers/stripe.js";

/**
 * A month that ends: a tier bought as a Stripe subscription (the real SDK against the Stripe
 * stand-in), its period on the tier NFT's record, renewed by invoice.paid, cancelled in the
 * customer portal, ended by failed payments, and lapsing to free with nothing deleted. The tier
 * is what the default collaborators say (the NFTs connected wallets hold, through the indexer
 * stand-in), through the status route and the OAuth client limit.
 */
const SECRET_KEY = "sk_test_periods";
const WEBHOOK_SECRET = "whsec_test_periods";
const PRICES = { plus: "price_plusrecurring", pro: "price_prorecurring", plusAnnual: "price_plusannualrecurring" };
const ONE_TIME = "price_onetimeonly";
const collection = () => `${randomBytes(32).toString("hex")}_0`;
const COLLECTIONS: Record<PaidTierId, string> = { plus: collection(), pro: collection() };

const stack = useBillingStack({
  secretKey: SECRET_KEY,
  webhookSecret: WEBHOOK_SECRET,
  collections: COLLECTIONS,
  stripe: { prices: Object.values(PRICES), oneTimePrices: [ONE_TIME], checkoutPage: true },
  env: { STRIPE_PRICE_PLUS: PRICES.plus, STRIPE_PRICE_PLUS_ANNUAL: PRICES.plusAnnual, STRIPE_PRICE_PRO: PRICES.pro, STRIPE_PRICE_PRO_ANNUAL: ONE_TIME },
});
let indexer: BillingStack["indexer"];
let stripe: BillingStack["stripe"];
let server: TestServer;
beforeAll(() => void ({ indexer, stripe, server } = stack));
const browser = useBrowser();

/** A signed-in person with a registered identity and one connected wallet (where the NFT is minted). */
async function personWithWallet() {
  const person = await personWithWallets(server, 1);
  const wallet = person.wallets[0]!;
  indexer.script(wallet.address, { kind: "ok", txos: [] });
  return { ...person, wallet };
}
type Person = Awaited<ReturnType<typeof personWithWallet>>;

const status = (cookie: string) => server.api("/api/subscription/status", { cookie });
const deliver = async (type: string, object: unknown, id?: string) => {
  const res = await webhook(server, signedEvent(WEBHOOK_SECRET, type, object as Record<string, unknown>, id ? { id } : {}));
  expect(res.status, `${type}: ${res.text}`).toBe(200);
  return res;
};
const seconds = (ms: number) => new Date(Math.floor((Date.now() + ms) / 1000) * 1000);
const iso = (date: Date) => date.toISOString();
const jobsOf = (userId: string) => server.db.selectFrom("mintJob").selectAll().where("userId", "=", userId).execute();
const sleepUntil = async (date: Date) => {
  const wait = date.getTime() - Date.now() + 250;
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
};

/** Starts a Checkout through our API: the Checkout Session's id at the stand-in. */
async function startCheckout(person: { cookie: string }, tierId: PaidTierId, interval: "monthly" | "annual" = "monthly") {
  const res = await server.api("/api/subscription/checkout", { cookie: person.cookie, body: { tierId, interval } });
  expect(res.status, res.text).toBe(200);
  return res.json.sessionId as string;
}

/**
 * `person` subscribes to `tier` paid up to `periodEnd`: Checkout through our API, paid at the
 * stand-in, checkout.session.completed delivered, the NFT minted and then shown in the wallet.
 */
async function subscribe(person: Person, tier: PaidTierId, periodEnd: Date) {
  const paid = stripe.pay(await startCheckout(person, tier), periodEnd);
  await deliver("checkout.session.completed", paid.session);
  const payment = await until("the payment", () => paymentOf(server, paid.session.id));
  const job = await until(
    "the mint",
    async () => {
      const row = await server.db.selectFrom("mintJob").selectAll().where("paymentId", "=", payment.id).executeTakeFirst();
      return row?.status === "done" ? row : null;
    },
    15_000,
  );
  indexer.script(person.wallet.address, { kind: "ok", txos: [txo(person.wallet.address, { origin: job.nftOrigin!, collectionId: COLLECTIONS[tier] })] });
  return { ...paid, payment, origin: job.nftOrigin! };
}

const web = { client_name: "Billed", redirect_uris: ["https://rp.example.com/cb"], token_endpoint_auth_method: "none" };
const createClient = (cookie: string) => server.api("/api/auth/oauth2/create-client", { cookie, body: web });

describe("checkout starts a subscription", () => {
  it("sends a subscription-mode Checkout on the tier's recurring price, with our metadata on the subscription too", async () => {
    const person = await personWithWallet();
    await startCheckout(person, "plus", "annual");
    expect(stripe.checkouts.at(-1)).toMatchObject({
      mode: "subscription",
      "line_items[0][price]": PRICES.plusAnnual,
      client_reference_id: person.user.id,
      "metadata[tier]": "plus",
      "metadata[interval]": "annual",
      "subscription_data[metadata][userId]": person.user.id,
      "subscription_data[metadata][tier]": "plus",
      customer_email: person.email,
    });
    expect(Object.keys(stripe.checkouts.at(-1)!).some((k) => k.startsWith("payment_intent_data"))).toBe(false);
  });

  it("answers 502 when the configured price is a one-time price Stripe refuses for a subscription", async () => {
    const person = await personWithWallet();
    const res = await server.api("/api/subscription/checkout", { cookie: person.cookie, body: { tierId: "pro", interval: "annual" } });
    expect(res.status).toBe(502);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
  });
});

describe("a month that ends", () => {
  it("a subscription bought, renewed, cancelled and lapsed: the tier follows (status and client limit), and nothing is deleted", { timeout: 60_000 }, async () => {
    const person = await personWithWallet();
    const first = seconds(8_000);
    const bought = await subscribe(person, "plus", first);
    const subscriptionId = bought.subscription.id;
    expect(bought.payment).toMatchObject({ subscriptionId, customerId: bought.subscription.customer, paymentStatus: "paid" });

    // Bought: plus until the end of the first period, renewing.
    const active = await status(person.cookie);
    expect(active.json).toMatchObject({ tier: "plus", isActive: true, nftOrigin: bought.origin, periodEnd: iso(first), renews: true });
    for (let i = 0; i < 3; i++) expect((await createClient(person.cookie)).status, `client ${i + 1}`).toBeLessThan(300);

    // Renewed: the next invoice is paid; the period runs on (the cached answer is dropped at once).
    const second = seconds(16_000);
    const renewal = stripe.renew(subscriptionId, second);
    const eventId = `evt_${randomBytes(8).toString("hex")}`;
    await deliver("invoice.paid", renewal, eventId);
    expect((await status(person.cookie)).json).toMatchObject({ tier: "plus", periodEnd: iso(second), renews: true });
    // Redelivered, and the first invoice's event arriving late: the period neither moves twice nor back.
    expect((await deliver("invoice.paid", renewal, eventId)).json).toEqual({ received: true, duplicate: true });
    await deliver("invoice.paid", bought.invoice);
    const [job] = await jobsOf(person.user.id);
    expect(new Date(job!.periodEnd as string | Date).toISOString()).toBe(iso(second));

    // Cancelled in the customer portal: still plus to the end of what was paid, no renewal.
    await deliver("customer.subscription.updated", stripe.cancel(subscriptionId));
    expect((await status(person.cookie)).json).toMatchObject({ tier: "plus", periodEnd: iso(second), renews: false });

    // Past the first period's end: the renewal holds.
    await sleepUntil(first);
    expect((await status(person.cookie)).json).toMatchObject({ tier: "plus" });
    expect((await createClient(person.cookie)).status).toBeLessThan(300);

    // Past the paid period: free, the user and the session say so, no new client; the four kept.
    await sleepUntil(second);
    expect((await status(person.cookie)).json).toEqual({ tier: "free", isActive: true });
    const session = await server.api("/api/auth/get-session", { cookie: person.cookie });
    expect(session.json.user.subscriptionTier).toBe("free");
    expect(session.json.session.subscriptionTier).toBe("free");
    const refused = await createClient(person.cookie);
    expect(refused.status).toBe(403);
    expect(refused.json).toMatchObject({ code: "CLIENT_LIMIT_REACHED", tier: "free", limit: 1 });
    const clients = await server.db.selectFrom("oauthClient").select(["clientId", "disabled"]).where("userId", "=", person.user.id).execute();
    expect(clients).toHaveLength(4);
    expect(clients.every((c) => !c.disabled)).toBe(true);
    // Clients over the free limit keep working: each still answers the public client lookup.
    const listed = await server.api("/api/auth/oauth2/get-clients", { cookie: person.cookie });
    expect(listed.status, listed.text).toBe(200);
    expect(listed.json).toHaveLength(4);

    // The subscription's end is acknowledged and recorded; the NFT's record stays.
    await deliver("customer.subscription.deleted", stripe.end(subscriptionId));
    expect((await status(person.cookie)).json).toEqual({ tier: "free", isActive: true });
    expect(await jobsOf(person.user.id)).toMatchObject([{ status: "done", nftOrigin: bought.origin, subscriptionStatus: "canceled" }]);
  });

  it("a failed renewal ends the tier at the period's end; a later successful retry brings it back", { timeout: 60_000 }, async () => {
    const person = await personWithWallet();
    const end = seconds(6_000);
    const bought = await subscribe(person, "pro", end);
    expect((await status(person.cookie)).json).toMatchObject({ tier: "pro", periodEnd: iso(end) });
    await deliver("invoice.payment_failed", stripe.failPayment(bought.subscription.id));
    // Stripe retries a past-due subscription: still pro meanwhile.
    expect((await status(person.cookie)).json).toMatchObject({ tier: "pro", periodEnd: iso(end), renews: true });
    await sleepUntil(end);
    expect((await status(person.cookie)).json).toEqual({ tier: "free", isActive: true });
    // The retry succeeds: paid again, pro again, with its settings and clients as they were.
    const later = seconds(3_600_000);
    await deliver("invoice.paid", stripe.renew(bought.subscription.id, later));
    expect((await status(person.cookie)).json).toMatchObject({ tier: "pro", periodEnd: iso(later), renews: true });
  });

  it("the period goes with the NFT: a holder after a transfer holds what is left of it", async () => {
    const buyer = await personWithWallet();
    const end = seconds(3_600_000);
    const { origin } = await subscribe(buyer, "plus", end);
    const holder = await personWithWallet();
    indexer.script(buyer.wallet.address, { kind: "ok", txos: [] });
    indexer.script(holder.wallet.address, { kind: "ok", txos: [txo(holder.wallet.address, { origin, collectionId: COLLECTIONS.plus })] });
    expect((await status(holder.cookie)).json).toMatchObject({ tier: "plus", nftOrigin: origin, periodEnd: iso(end) });
    expect((await status(buyer.cookie)).json).toEqual({ tier: "free", isActive: true });
  });

  it("a move to another tier's price in the portal mints that tier's NFT; the old one keeps what was paid and no longer renews", { timeout: 30_000 }, async () => {
    const person = await personWithWallet();
    const end = seconds(3_600_000);
    const plus = await subscribe(person, "plus", end);
    // Same tier, another interval: an ordinary update, nothing minted.
    await deliver("customer.subscription.updated", stripe.changePrice(plus.subscription.id, PRICES.plusAnnual));
    expect(await jobsOf(person.user.id)).toHaveLength(1);

    await deliver("customer.subscription.updated", stripe.changePrice(plus.subscription.id, PRICES.pro));
    const pro = await until("the pro mint", async () => (await jobsOf(person.user.id)).find((j) => j.tier === "pro" && j.status === "done"), 15_000);
    expect(new Date(pro.periodEnd as string | Date).toISOString()).toBe(iso(end));
    indexer.script(person.wallet.address, {
      kind: "ok",
      txos: [txo(person.wallet.address, { origin: plus.origin, collectionId: COLLECTIONS.plus }), txo(person.wallet.address, { origin: pro.nftOrigin!, collectionId: COLLECTIONS.pro })],
    });
    expect((await status(person.cookie)).json).toMatchObject({ tier: "pro", nftOrigin: pro.nftOrigin, periodEnd: iso(end), renews: true });
    // The next invoice extends the pro NFT, not the plus one.
    const later = seconds(7_200_000);
    await deliver("invoice.paid", stripe.renew(plus.subscription.id, later));
    const jobs = await jobsOf(person.user.id);
    const byTier = Object.fromEntries(jobs.map((j) => [j.tier, j]));
    expect(new Date(byTier.pro!.periodEnd as string | Date).toISOString()).toBe(iso(later));
    expect(new Date(byTier.plus!.periodEnd as string | Date).toISOString()).toBe(iso(end));
    expect(byTier.plus).toMatchObject({ subscriptionStatus: "replaced" });
  });

  it("an NFT of ours whose period has ended counts for nobody", async () => {
    const person = await personWithWallet();
    const { origin } = await subscribe(person, "plus", seconds(-1_000));
    expect(origin).toBeTruthy();
    expect((await status(person.cookie)).json).toEqual({ tier: "free", isActive: true });
  });
});

describe("delayed payment methods", () => {
  it("mints nothing while the Checkout is unpaid, then mints with the subscription's period once async_payment_succeeded", { timeout: 30_000 }, async () => {
    const person = await personWithWallet();
    const end = seconds(3_600_000);
    const paid = stripe.pay(await startCheckout(person, "plus"), end, { delayed: true });
    await deliver("checkout.session.completed", paid.session);
    const payment = await until("the payment", () => paymentOf(server, paid.session.id));
    expect(payment.paymentStatus).toBe("unpaid");
    expect(await jobsOf(person.user.id)).toHaveLength(0);

    stripe.settle(paid.subscription.id);
    await deliver("checkout.session.async_payment_succeeded", { ...paid.session, payment_status: "paid" });
    expect((await paymentOf(server, paid.session.id))!.paymentStatus).toBe("paid");
    const job = await until("the mint", async () => ((await jobsOf(person.user.id))[0]?.status === "done" ? (await jobsOf(person.user.id))[0] : null), 15_000);
    expect(new Date(job.periodEnd as string | Date).toISOString()).toBe(iso(end));
    indexer.script(person.wallet.address, { kind: "ok", txos: [txo(person.wallet.address, { origin: job.nftOrigin!, collectionId: COLLECTIONS.plus })] });
    expect((await status(person.cookie)).json).toMatchObject({ tier: "plus", periodEnd: iso(end) });
  });

  it("records a delayed payment that failed, and mints nothing", async () => {
    const person = await personWithWallet();
    const paid = stripe.pay(await startCheckout(person, "plus"), seconds(3_600_000), { delayed: true });
    await deliver("checkout.session.completed", paid.session);
    await deliver("checkout.session.async_payment_failed", paid.session);
    expect((await paymentOf(server, paid.session.id))!.paymentStatus).toBe("failed");
    expect(await jobsOf(person.user.id)).toHaveLength(0);
  });
});

describe("webhook robustness for subscription events", () => {
  it("refuses subscription events that are not signed by Stripe, and changes nothing", async () => {
    const person = await personWithWallet();
    const end = seconds(3_600_000);
    const bought = await subscribe(person, "plus", end);
    const renewal = stripe.renew(bought.subscription.id, seconds(7_200_000));
    for (const forged of [signedEvent("whsec_someone_else", "invoice.paid", renewal as never), { payload: signedEvent(WEBHOOK_SECRET, "invoice.paid", renewal as never).payload }]) {
      const res = await webhook(server, forged);
      expect(res.status).toBe(400);
      expect(res.json.code).toBe("INVALID_SIGNATURE");
    }
    expect((await status(person.cookie)).json).toMatchObject({ periodEnd: iso(end) });
  });

  it("answers 503 (Stripe redelivers) when the subscription of a completed Checkout cannot be read, and records nothing", async () => {
    const person = await personWithWallet();
    const session = { id: `cs_test_${randomBytes(8).toString("hex")}`, object: "checkout.session", mode: "subscription", client_reference_id: person.user.id, metadata: { userId: person.user.id, tier: "plus", interval: "monthly" }, subscription: "sub_unknownatstripe", customer: "cus_x", payment_status: "paid", amount_total: 1000, currency: "usd" };
    const event = signedEvent(WEBHOOK_SECRET, "checkout.session.completed", session);
    const res = await webhook(server, event);
    expect(res.status).toBe(503);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    expect(await paymentOf(server, session.id)).toBeUndefined();
    expect(await server.db.selectFrom("stripeEvent").selectAll().where("eventId", "=", JSON.parse(event.payload).id).execute()).toHaveLength(0);
  });

  it("acknowledges events for subscriptions that are not ours", async () => {
    for (const [type, object] of [
      ["invoice.paid", { id: "in_x", object: "invoice", parent: { subscription_details: { subscription: "sub_notours" } }, lines: { data: [{ period: { start: 1, end: 2 } }] } }],
      ["invoice.payment_failed", { id: "in_y", object: "invoice", parent: null, lines: { data: [] } }],
      ["customer.subscription.updated", { id: "sub_notours", object: "subscription", status: "active", cancel_at_period_end: true, items: { data: [] } }],
      ["customer.subscription.deleted", { id: "sub_notours", object: "subscription", status: "canceled", items: { data: [] } }],
    ] as const)
      await deliver(type, object);
  });
});

describe("POST /api/subscription/portal (Stripe's customer portal)", () => {
  it("answers 401 without a session, 404 for someone who never subscribed", async () => {
    const anonymous = await server.api("/api/subscription/portal", { method: "POST" });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("content-type")).toContain("application/problem+json");
    const { cookie } = await signUp(server);
    const none = await server.api("/api/subscription/portal", { method: "POST", cookie });
    expect(none.status).toBe(404);
    expect(none.json).toMatchObject({ status: 404, code: "NO_BILLING_ACCOUNT" });
  });

  it("answers the portal session's url for the subscriber's Stripe customer, returning to the account page; a new Checkout reuses the customer", async () => {
    const person = await personWithWallet();
    const bought = await subscribe(person, "plus", seconds(3_600_000));
    const res = await server.api("/api/subscription/portal", { method: "POST", cookie: person.cookie });
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.json.url.startsWith(`${stripe.url}/p/session/bps_`)).toBe(true);
    expect(stripe.portalSessions.at(-1)).toEqual({ customer: bought.subscription.customer, return_url: `${server.url}/account/plan#billing` });

    await startCheckout(person, "pro");
    expect(stripe.checkouts.at(-1)).toMatchObject({ customer: bought.subscription.customer });
    expect(stripe.checkouts.at(-1)!.customer_email).toBeUndefined();
  });

  it("the account page shows the period's end and a Manage billing button that leads to the portal", async () => {
    const person = await personWithWallet();
    const end = seconds(3_600_000);
    const bought = await subscribe(person, "plus", end);
    const page = await server.api("/account/plan", { cookie: person.cookie });
    expect(page.status).toBe(200);
    expect(page.text).toContain(`datetime="${iso(end)}"`);
    expect(page.text).toMatch(/renews/i);
    expect(page.text).toContain('action="/account/billing/portal"');
    const go = await postForm(server, "/account/billing/portal", {}, { cookie: person.cookie, origin: server.url });
    expect(go.status).toBe(303);
    expect(go.headers.get("location")!.startsWith(`${stripe.url}/p/session/bps_`)).toBe(true);
    expect(stripe.portalSessions.at(-1)!.customer).toBe(bought.subscription.customer);

    // Someone who never paid sees no button; a cross-site post is refused.
    const stranger = await signUp(server);
    expect((await server.api("/account/plan", { cookie: stranger.cookie })).text).not.toContain('action="/account/billing/portal"');
    const crossSite = await postForm(server, "/account/billing/portal", {}, { cookie: person.cookie, origin: "https://evil.example" });
    expect(crossSite.status).toBe(403);
  });
});

describe("Manage billing in Chromium", () => {
  it("shows the paid period on /account and goes through Stripe's portal back to the plan section", async () => {
    const person = await personWithWallet();
    const end = seconds(3_600_000);
    await subscribe(person, "pro", end);
    const page = await browser.page();
    await addCookies(page.context(), person.cookie, server.url);
    await page.goto(`${server.url}/account/plan`);
    const plan = page.locator("#subscription");
    await expect(plan.locator("[data-tier]").textContent()).resolves.toBe("Pro");
    await expect(plan.locator(`time[datetime="${iso(end)}"]`).count()).resolves.toBe(1);
    await expect(plan.textContent()).resolves.toMatch(/Paid until .* it renews then unless you cancel/);
    const portals = stripe.portalSessions.length;
    await Promise.all([page.waitForURL(`${server.url}/account/plan#billing`), page.getByRole("button", { name: "Manage billing", exact: true }).click()]);
    expect(stripe.portalSessions).toHaveLength(portals + 1);
    await expect(page.locator("#billing").isVisible()).resolves.toBe(true);
  });
});
