import { randomUUID } from "node:crypto";
import type { Page } from "playwright-core";
import { hexToString, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { afterAll, describe, expect, it } from "vitest";
import type { TierOwnershipChecker } from "../../plugins/subscriptions/ownership.js";
import type { PaidTierId } from "../../plugins/subscriptions/tiers.js";
import { INDEXER_DEADLINE_MS } from "../../routes/pages/account/load.js";
import { addCookies } from "../helpers/browser.js";
import { signUpWithForm, useBrowser, useTestServer } from "../helpers/fixtures.js";
import { signUp } from "../helpers/oauth.js";
import { startIndexer, txo } from "../helpers/ordinals.js";
import { postForm } from "../helpers/server.js";
import { startStripeStandIn } from "../helpers/stripe.js";
import { CONNECT, connectWallet as connectThroughApi, newWallet, personWithIdentity as signedUpWithIdentity, type Person, type Wallet } from "../helpers/wallet.js";

/**
 * The account page's plan, wallets and NFTs sections (issue 10): the tier and its features,
 * managing connected wallets from the page, the NFTs the indexer stand-in reports (and what the
 * page says when it fails), and an upgrade from the page through the Stripe stand-in's checkout
 * back to /account?subscription=success (and on to the plan page), in headless Chromium.
 */
const SECRET_KEY = "sk_test_accountbilling";
const PRICES = { plus: "price_plusmonthly", plusAnnual: "price_plusannual", pro: "price_promonthly" };

/** The tier-NFT ownership service, faked through its interface: who holds which tier, whose check fails or hangs. */
const owned = new Map<string, PaidTierId>();
const failing = new Set<string>();
const hanging = new Set<string>();
const ownership: TierOwnershipChecker = {
  async ownsTierNft(userId, tier) {
    if (failing.has(userId)) throw new Error("indexer unreachable");
    if (hanging.has(userId)) await new Promise((resolve) => setTimeout(resolve, INDEXER_DEADLINE_MS + 2000));
    return owned.get(userId) === tier ? { nftOrigin: `${"ab".repeat(32)}_0`, walletAddress: "1TierWa11etxxxxxxxxxxxxxxxxxxxxxx" } : null;
  },
};

let indexer: Awaited<ReturnType<typeof startIndexer>>;
let stripe: Awaited<ReturnType<typeof startStripeStandIn>>;
const browser = useBrowser();
const server = useTestServer(async () => {
  indexer = await startIndexer();
  stripe = await startStripeStandIn({ secretKey: SECRET_KEY, prices: Object.values(PRICES), checkoutPage: true });
  return {
    ORDINALS_API_URL: indexer.url,
    ORDINALS_API_TIMEOUT: "300",
    OUTBOUND_ALLOW_PRIVATE: "true",
    STRIPE_SECRET_KEY: SECRET_KEY,
    STRIPE_PRICE_PLUS: PRICES.plus,
    STRIPE_PRICE_PLUS_ANNUAL: PRICES.plusAnnual,
    STRIPE_PRICE_PRO: PRICES.pro,
    STRIPE_API_BASE_URL: stripe.url,
  };
}, { subscriptions: { ownership } });
afterAll(async () => {
  await indexer?.close();
  await stripe?.close();
});

const personWithIdentity = () => signedUpWithIdentity(server);
const connectWallet = (person: Person, provider: string, w?: Wallet) => connectThroughApi(server, person, provider, w);

const planPage = (cookie: string) => server.api("/account/plan", { cookie });
const identitiesPage = (cookie: string) => server.api("/account/identities", { cookie });
const walletRow = (person: Person, w: Wallet) => server.db.selectFrom("walletConnection").selectAll().where("userId", "=", person.user.id).where("address", "=", w.address).executeTakeFirst();
const flag = (v: unknown) => v === true || v === 1 || v === "1";
/** A form post from our own pages (same Origin), as the page's buttons send it. */
const ownForm = (cookie: string, path: string, fields: Record<string, string>) => postForm(server, path, fields, { cookie, origin: server.url });

/** Opens the identities page (wallets, NFTs) in a browser profile that carries `cookie`. */
async function openAccount(cookie: string): Promise<Page> {
  const page = await browser.page();
  await addCookies(page.context(), cookie, server.url);
  await page.goto(`${server.url}/account/identities`);
  return page;
}

/** Clicks a button (by accessible name) and waits for the page its form leads to. */
async function press(page: Page, name: string) {
  await Promise.all([page.waitForNavigation({ waitUntil: "load" }), page.getByRole("button", { name, exact: true }).click()]);
}

describe("plan", () => {
  it("shows the free tier, its features and upgrade buttons for each configured price, with the page's headers", async () => {
    const { cookie } = await signUp(server);
    const res = await planPage(cookie);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    expect(res.text).toContain('<section id="subscription"');
    expect(res.text).toMatch(/Your plan: <strong data-tier="free">Free<\/strong>/);
    for (const feature of ["basic authentication", "1 OAuth client"]) expect(res.text).toContain(`<li>${feature}</li>`);
    // Plus monthly and annual, Pro monthly: the prices configured here; Pro annual is not.
    expect(res.text).toContain("Upgrade to Plus, $10 a month");
    expect(res.text).toContain("Upgrade to Plus, $100 a year");
    expect(res.text).toContain("Upgrade to Pro, $50 a month");
    expect(res.text).not.toContain("Upgrade to Pro, $500 a year");
    expect(res.text).toContain('action="/account/subscription/checkout"');
  });

  it("the upgrade form starts the same Checkout as the API and sends the browser to Stripe; bad input and cross-site posts do not", async () => {
    const person = await signUp(server);
    const before = stripe.checkouts.length;
    const res = await ownForm(person.cookie, "/account/subscription/checkout", { tier: "pro", interval: "monthly" });
    expect(res.status).toBe(303);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("location")).toMatch(new RegExp(`^${stripe.url}/c/pay/cs_test_`));
    const sent = stripe.checkouts.at(-1)!;
    expect(stripe.checkouts.length).toBe(before + 1);
    expect(sent).toMatchObject({
      "line_items[0][price]": PRICES.pro,
      client_reference_id: person.user.id,
      "metadata[tier]": "pro",
      "metadata[interval]": "monthly",
      success_url: `${server.url}/account?subscription=success`,
      cancel_url: `${server.url}/account?subscription=cancelled`,
    });

    const unpriced = await ownForm(person.cookie, "/account/subscription/checkout", { tier: "pro", interval: "annual" });
    expect(unpriced.status).toBe(303);
    expect(unpriced.headers.get("location")).toBe("/account/plan?error=PRICE_NOT_CONFIGURED#subscription");
    const bad = await ownForm(person.cookie, "/account/subscription/checkout", { tier: "free", interval: "monthly" });
    expect(bad.headers.get("location")).toBe("/account/plan?error=INVALID_INPUT#subscription");
    const foreign = await postForm(server, "/account/subscription/checkout", { tier: "plus", interval: "monthly" }, { cookie: person.cookie, origin: "https://evil.example" });
    expect(foreign.status).toBe(403);
    expect(stripe.checkouts.length).toBe(before + 1);
    // Signed out: to the sign-in page, and nothing is sent to Stripe.
    const anonymous = await postForm(server, "/account/subscription/checkout", { tier: "plus", interval: "monthly" }, { origin: server.url });
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.get("location")).toMatch(/^\/sign-in/);
    expect(stripe.checkouts.length).toBe(before + 1);
  });

  it("shows a paid tier with its features and when it was checked, and offers only the higher tier", async () => {
    const person = await signUp(server);
    owned.set(person.user.id, "plus");
    const res = await planPage(person.cookie);
    expect(res.text).toMatch(/Your plan: <strong data-tier="plus">Plus<\/strong>/);
    for (const feature of ["10 OAuth clients", "custom branding", "e-mail support"]) expect(res.text).toContain(`<li>${feature}</li>`);
    expect(res.text).toMatch(/\(checked <time datetime="\d{4}-\d\d-\d\dT/);
    expect(res.text).not.toContain("Upgrade to Plus");
    expect(res.text).toContain("Upgrade to Pro, $50 a month");
  });

  it("shows the tier last recorded, saying so, when the ownership check fails or outlasts the page's deadline", async () => {
    const broken = await signUp(server);
    failing.add(broken.user.id);
    const res = await planPage(broken.cookie);
    expect(res.status).toBe(200);
    expect(res.text).toMatch(/data-tier="free"/);
    expect(res.text).toContain("We could not check your plan");

    const slow = await signUp(server);
    hanging.add(slow.user.id);
    await server.db.updateTable("user").set({ subscriptionTier: "pro" }).where("id", "=", slow.user.id).execute();
    const started = Date.now();
    const late = await planPage(slow.cookie);
    expect(Date.now() - started).toBeLessThan(INDEXER_DEADLINE_MS + 1500);
    expect(late.status).toBe(200);
    expect(late.text).toMatch(/Your plan: <strong data-tier="pro">Pro<\/strong>/);
    expect(late.text).toContain("We could not check your plan");
    expect(late.text).not.toContain("Upgrade to");
  });

  it("words the return from Stripe, cancelled as well as paid", async () => {
    const { cookie } = await signUp(server);
    // Stripe comes back to /account?subscription=... (plugins/subscriptions/checkout.ts), which goes on to the plan page.
    expect((await server.api("/account?subscription=success", { cookie })).headers.get("location")).toBe("/account/plan?subscription=success");
    expect((await server.api("/account/plan?subscription=cancelled", { cookie })).text).toContain("The checkout was cancelled. You were not charged.");
    expect((await server.api("/account/plan?subscription=success", { cookie })).text).toContain("your payment went through");
    expect((await server.api("/account/plan?subscription=%3Cb%3E", { cookie })).text).not.toContain("<b>");
  });
});

describe("wallets", () => {
  it("lists connected wallets, and make-primary, use-for-payments and disconnect work from the page", async () => {
    const person = await personWithIdentity();
    const yours = await connectWallet(person, "yours");
    const other = await connectWallet(person, "handcash");
    const page = await openAccount(person.cookie);
    const wallets = page.locator("section#wallets");
    await expect(wallets.locator("tbody tr").count()).resolves.toBe(2);
    const yoursRow = wallets.locator(`tr[data-wallet="${yours.address}"]`);
    const otherRow = wallets.locator(`tr[data-wallet="${other.address}"]`);
    await expect(yoursRow.textContent()).resolves.toContain("Primary");
    await expect(yoursRow.textContent()).resolves.toContain(person.id.bapId);
    await expect(otherRow.textContent()).resolves.toContain("(handcash)");
    // Payments only through Yours or 1Sat wallets: no button on the other row.
    await expect(otherRow.getByRole("button", { name: /^Use for payments/ }).count()).resolves.toBe(0);
    await expect(page.locator("section#wallets").textContent()).resolves.toContain("POST /api/wallet/connect");

    await press(page, `Make primary: handcash wallet ${other.address}`);
    expect(new URL(page.url()).search).toBe("?notice=wallet-primary-set");
    await expect(page.locator("p.notice").textContent()).resolves.toBe("That wallet is now the primary one for its identity.");
    expect(flag((await walletRow(person, other))!.isPrimary)).toBe(true);
    expect(flag((await walletRow(person, yours))!.isPrimary)).toBe(false);

    await press(page, `Use for payments: yours wallet ${yours.address}`);
    expect(new URL(page.url()).search).toBe("?notice=wallet-payment-set");
    expect(flag((await walletRow(person, yours))!.isPayment)).toBe(true);
    await expect(wallets.locator(`tr[data-wallet="${yours.address}"]`).textContent()).resolves.toContain("Payments");

    await press(page, `Disconnect: handcash wallet ${other.address}`);
    expect(new URL(page.url()).search).toBe("?notice=wallet-disconnected");
    expect(await walletRow(person, other)).toBeUndefined();
    // The primary wallet was disconnected: the remaining one took its place (the store's rule).
    expect(flag((await walletRow(person, yours))!.isPrimary)).toBe(true);
    await expect(wallets.locator("tbody tr").count()).resolves.toBe(1);

    // The API agrees with what the page did.
    const listed = await server.api(CONNECT, { cookie: person.cookie });
    expect(listed.json.wallets.map((w: any) => [w.address, w.isPrimary, w.isPayment])).toEqual([[yours.address, true, true]]);
  });

  it("a payment wallet must be Yours or 1Sat, as in the API", async () => {
    const person = await personWithIdentity();
    const other = await connectWallet(person, "handcash");
    const res = await ownForm(person.cookie, "/account/wallets/payment", { bap_id: person.id.bapId, address: other.address });
    expect(res.headers.get("location")).toBe("/account/identities?error=PAYMENT_PROVIDER_NOT_SUPPORTED#wallets");
    expect(flag((await walletRow(person, other))!.isPayment)).toBe(false);
    expect((await server.api("/account/identities?error=PAYMENT_PROVIDER_NOT_SUPPORTED", { cookie: person.cookie })).text).toContain("Only Yours and 1Sat wallets can receive payments.");
  });

  it("a co-member of the owner's organization, or a stranger, cannot act on the owner's wallets; cross-site posts get 403", async () => {
    const owner = await personWithIdentity();
    const first = await connectWallet(owner, "yours");
    const second = await connectWallet(owner, "1sat");
    const stranger = await personWithIdentity();
    const coMember = await personWithIdentity();
    const org = await server.api("/api/auth/organization/create", { cookie: owner.cookie, body: { name: "Wallet Org", slug: `wallet-org-${Date.now()}` } });
    expect(org.status).toBe(200);
    await server.db.insertInto("member").values({ id: randomUUID(), organizationId: org.json.id, userId: coMember.user.id, role: "admin", createdAt: new Date() }).execute();

    const fields = { bap_id: owner.id.bapId, address: second.address };
    for (const other of [stranger, coMember]) {
      for (const action of ["primary", "payment", "disconnect"]) {
        const res = await ownForm(other.cookie, `/account/wallets/${action}`, fields);
        expect(res.status, action).toBe(303);
        expect(res.headers.get("location"), action).toBe("/account/identities?error=WALLET_NOT_CONNECTED#wallets");
      }
      // Nor does their page show the owner's wallets.
      expect((await identitiesPage(other.cookie)).text).not.toContain(second.address);
    }
    for (const action of ["primary", "payment", "disconnect"]) {
      const res = await postForm(server, `/account/wallets/${action}`, fields, { cookie: owner.cookie, origin: "https://evil.example" });
      expect(res.status, action).toBe(403);
      const marked = await postForm(server, `/account/wallets/${action}`, fields, { cookie: owner.cookie, "sec-fetch-site": "cross-site" });
      expect(marked.status, action).toBe(403);
    }
    const [a, b] = [(await walletRow(owner, first))!, (await walletRow(owner, second))!];
    expect([flag(a.isPrimary), flag(b.isPrimary), flag(a.isPayment), flag(b.isPayment)]).toEqual([true, false, false, false]);
  });
});

describe("connecting a browser wallet from the page", () => {
  /**
   * /account in a browser whose "extension" is an EIP-1193 provider at window.ethereum, backed
   * by a viem private-key account in the test: a real signature, as MetaMask would make it.
   */
  async function accountWithEthereumWallet(cookie: string, account: PrivateKeyAccount) {
    const page = await browser.page();
    await addCookies(page.context(), cookie, server.url);
    const calls: { method: string; params: unknown[] }[] = [];
    await page.exposeFunction("__testWallet", async (method: string, params: unknown[]) => {
      calls.push({ method, params });
      if (method === "eth_requestAccounts") return [account.address];
      if (method === "personal_sign") {
        const [data, address] = params as [Hex, string];
        if (address.toLowerCase() !== account.address.toLowerCase()) throw new Error("not this wallet's account");
        return account.signMessage({ message: { raw: data } });
      }
      throw new Error(`unsupported method ${method}`);
    });
    await page.addInitScript(() => {
      const bridge = (window as unknown as { __testWallet: (method: string, params: unknown[]) => Promise<unknown> }).__testWallet;
      (window as unknown as { ethereum: unknown }).ethereum = { isMetaMask: true, request: (args: { method: string; params?: unknown[] }) => bridge(args.method, args.params ?? []) };
    });
    await page.goto(`${server.url}/account/identities`);
    return { page, calls };
  }

  const connectButton = (page: Page) => page.getByRole("button", { name: "Connect an Ethereum wallet", exact: true });

  it("connects an EIP-1193 wallet: accounts, then a signed server challenge, then the wallet is listed on the page and in the API", async () => {
    const person = await personWithIdentity();
    const account = privateKeyToAccount(generatePrivateKey());
    const { page, calls } = await accountWithEthereumWallet(person.cookie, account);
    await expect(page.getByLabel("Identity to connect a wallet to").inputValue()).resolves.toBe(person.id.bapId);
    await Promise.all([page.waitForURL((url) => url.searchParams.get("notice") === "wallet-connected"), connectButton(page).click()]);
    await expect(page.locator("p.notice").textContent()).resolves.toBe("Your wallet is connected.");
    const row = page.locator(`section#wallets tr[data-wallet="${account.address}"]`);
    await expect(row.textContent()).resolves.toContain("(metamask)");
    await expect(row.textContent()).resolves.toContain("Primary");
    // The wallet was asked for its account, then signed the server's challenge for this identity.
    expect(calls.map((c) => c.method)).toEqual(["eth_requestAccounts", "personal_sign"]);
    expect(hexToString(calls[1]!.params[0] as Hex)).toContain(`connect this Ethereum account to BAP identity ${person.id.bapId}`);
    const listed = await server.api(CONNECT, { cookie: person.cookie });
    expect(listed.json.wallets).toEqual([expect.objectContaining({ address: account.address, provider: "metamask", connectionMethod: "evm", bapId: person.id.bapId, isPrimary: true })]);
  });

  it("says so when the browser has no wallet, or when the person declines in it, and connects nothing", async () => {
    const person = await personWithIdentity();
    const page = await openAccount(person.cookie);
    const alert = page.locator("#wallet-connect [role=alert]");
    await connectButton(page).click();
    await alert.waitFor({ state: "visible" });
    await expect(alert.textContent()).resolves.toMatch(/^No Ethereum wallet was found in this browser\./);
    expect(page.url()).toBe(`${server.url}/account/identities`);

    const declining = await browser.page();
    await addCookies(declining.context(), person.cookie, server.url);
    await declining.addInitScript(() => {
      (window as unknown as { ethereum: unknown }).ethereum = { request: () => Promise.reject(Object.assign(new Error("User rejected the request."), { code: 4001 })) };
    });
    await declining.goto(`${server.url}/account/identities`);
    await connectButton(declining).click();
    const declined = declining.locator("#wallet-connect [role=alert]");
    await declined.waitFor({ state: "visible" });
    await expect(declined.textContent()).resolves.toBe("You declined the request in your wallet. Nothing was connected.");
    expect((await server.api(CONNECT, { cookie: person.cookie })).json.wallets).toEqual([]);
  });

  it("without JavaScript the page says what connecting needs; without an identity it asks for one first", async () => {
    const person = await personWithIdentity();
    const page = (await identitiesPage(person.cookie)).text;
    expect(page).toMatch(/<form id="wallet-connect" hidden/);
    expect(page).toContain("needs JavaScript");
    expect(page).toMatch(/<script type="module" src="\/assets\/wallet-connect\.[0-9a-f]{16}\.js">/);
    const { cookie } = await signUp(server);
    const bare = (await identitiesPage(cookie)).text;
    expect(bare).not.toContain('id="wallet-connect"');
    expect(bare).toContain("Add a BAP identity (above), or confirm a suspended one, to connect wallets to it.");
  });
});

describe("NFTs", () => {
  it("lists the NFTs the indexer reports for the connected wallets", async () => {
    const person = await personWithIdentity();
    const w = newWallet();
    const nfts = [txo(w.address), txo(w.address), txo(w.address, { withOrigin: false })];
    indexer.script(w.address, { kind: "ok", txos: nfts });
    await connectWallet(person, "yours", w);
    const res = await identitiesPage(person.cookie);
    expect(res.status).toBe(200);
    const section = res.text.slice(res.text.indexOf('<section id="nfts"'));
    for (const n of nfts.slice(0, 2)) expect(section).toContain(`data-nft="${(n.origin as { outpoint: string }).outpoint}"`);
    // An output without an ordinal is not an NFT.
    expect(section).not.toContain(nfts[2]!.outpoint);
    expect(section).not.toContain('role="alert"');
  });

  it("says when the indexer failed or was too slow, on a page that still renders", async () => {
    const person = await personWithIdentity();
    const [good, broken, slow] = [newWallet(), newWallet(), newWallet()];
    const kept = txo(good.address);
    indexer.script(good.address, { kind: "ok", txos: [kept] });
    indexer.script(broken.address, { kind: "status", status: 500 });
    indexer.script(slow.address, { kind: "slow", ms: 5000 });
    for (const w of [good, broken, slow]) await connectWallet(person, "yours", w);
    const started = Date.now();
    const res = await identitiesPage(person.cookie);
    // The indexer's own deadline (300 ms an attempt, two retries) ends well before the page's.
    expect(Date.now() - started).toBeLessThan(4000);
    expect(res.status).toBe(200);
    const section = res.text.slice(res.text.indexOf('<section id="nfts"'));
    expect(section).toContain("could not be reached for 2 wallets");
    expect(section).toContain(broken.address);
    expect(section).toContain(slow.address);
    // What did answer is still shown.
    expect(section).toContain(`data-nft="${kept.origin!.outpoint}"`);
    // The rest of the page is there too.
    expect(res.text).toContain('<section id="identities"');
    expect(res.text).toContain('<section id="wallets"');
  });

  it("says so when no wallet is connected", async () => {
    const { cookie } = await signUp(server);
    expect((await identitiesPage(cookie)).text).toContain("Connect a wallet to see the NFTs it holds.");
  });
});

describe("upgrade in Chromium", () => {
  it("goes from Upgrade on the plan page through the Stripe stand-in's checkout back to /account?subscription=success, and on to the plan page", async () => {
    const page = await browser.page();
    const { userId } = await signUpWithForm(server, page);
    await page.goto(`${server.url}/account/plan`);
    await expect(page.locator("section#subscription").textContent()).resolves.toContain("Your plan: Free");
    const before = stripe.checkouts.length;
    const visited: string[] = [];
    page.on("request", (req) => {
      if (req.isNavigationRequest()) visited.push(req.url());
    });
    await press(page, "Upgrade to Plus, $10 a month");
    // Through Stripe's (stand-in's) checkout page, and back.
    expect(visited.some((u) => u.startsWith(`${stripe.url}/c/pay/cs_test_`))).toBe(true);
    expect(visited).toContain(`${server.url}/account?subscription=success`);
    expect(page.url()).toBe(`${server.url}/account/plan?subscription=success`);
    await expect(page.locator("p.notice").textContent()).resolves.toContain("your payment went through");
    await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe("Plan, billing, branding and analytics");
    expect(stripe.checkouts.length).toBe(before + 1);
    expect(stripe.checkouts.at(-1)).toMatchObject({ client_reference_id: userId, "metadata[tier]": "plus", "metadata[interval]": "monthly" });
  });
});
