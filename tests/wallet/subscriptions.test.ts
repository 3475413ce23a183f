import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BuyerWallet } from "../../plugins/subscriptions/minter.js";
import type { TierNft, TierOwnershipChecker } from "../../plugins/subscriptions/ownership.js";
import type { PaidTierId } from "../../plugins/subscriptions/tiers.js";
import { startMintWorker } from "../../plugins/subscriptions/worker.js";
import { signUp } from "../helpers/oauth.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { completedCheckout, jobAfterPayment, jobOf, paymentOf, signedEvent, startMintStandIn, startStripeStandIn, until, webhook } from "../helpers/stripe.js";

const SECRET_KEY = "sk_test_standin";
const WEBHOOK_SECRET = "whsec_test_standin";
const PRICES = { plusMonthly: "price_plusmonthly", proAnnual: "price_proannual" };
/** Configured here, unknown to Stripe (deleted in the dashboard, say). */
const STALE_PRICE = "price_deletedatstripe";

/** The NFT-ownership service, faked through its interface: which user holds which tier's NFT. */
const owned = new Map<string, TierNft & { tier: PaidTierId }>();
/** Users for whom the ownership service fails (its indexer is down). */
const unreachable = new Set<string>();
const ownership: TierOwnershipChecker = {
  async ownsTierNft(userId, tier) {
    if (unreachable.has(userId)) throw new Error("indexer timed out");
    const nft = owned.get(userId);
    return nft && nft.tier === tier ? { nftOrigin: nft.nftOrigin, walletAddress: nft.walletAddress } : null;
  },
};
/** Connected wallets, faked through their interface. */
const walletOf = new Map<string, string>();
const wallets: BuyerWallet = { walletAddressOf: async (userId) => walletOf.get(userId) ?? null };

let stripe: Awaited<ReturnType<typeof startStripeStandIn>>;
let mint: Awaited<ReturnType<typeof startMintStandIn>>;
let server: TestServer;
/** Webhook secret set, but no Stripe key and no minting service. */
let bare: TestServer;

/** A buyer's wallet for which the minting service answers an origin that is no outpoint. */
const ODD_WALLET = "1OddOriginWa11etxxxxxxxxxxxxxxxxx";

const checkout = (body: unknown, cookie?: string, target = server) => target.api("/api/subscription/checkout", { body, cookie });


// Two servers, one after the other: on PostgreSQL they would share the mint queue.
describe("with Stripe and a minting service", () => {
  beforeAll(async () => {
    stripe = await startStripeStandIn({ secretKey: SECRET_KEY, prices: Object.values(PRICES) });
    mint = await startMintStandIn({ failFirst: 1, originFor: (body) => (body.walletAddress === ODD_WALLET ? "TXID.0" : undefined) });
    server = await startTestServer(
      {
        STRIPE_SECRET_KEY: SECRET_KEY,
        STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
        STRIPE_PRICE_PLUS: PRICES.plusMonthly,
        STRIPE_PRICE_PRO_ANNUAL: PRICES.proAnnual,
        STRIPE_PRICE_PLUS_ANNUAL: STALE_PRICE,
        STRIPE_API_BASE_URL: stripe.url,
        MINT_SERVICE_URL: mint.url,
        MINT_SERVICE_TOKEN: "mint-token",
        OUTBOUND_ALLOW_PRIVATE: "true",
      },
      { subscriptions: { ownership, wallets, worker: { pollMs: 50, baseDelayMs: 150, waitMs: 100 } } },
    );
  });
  afterAll(async () => {
    await server?.close();
    await stripe?.close();
    await mint?.close();
  });

  describe("POST /api/subscription/checkout (spec, Subscription; Errors 8)", () => {
    it("answers 401 without a session, before looking at the body", async () => {
      const res = await checkout({ tierId: "plus", interval: "monthly" });
      expect(res.status).toBe(401);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
      expect((await checkout({})).status).toBe(401);
    });

    it("answers 400 for missing fields, an unknown tier and an invalid interval, naming the member", async () => {
      const { cookie } = await signUp(server);
      const cases: Array<[unknown, string]> = [
        [{}, "/tierId"],
        [{ tierId: "plus" }, "/interval"],
        [{ interval: "monthly" }, "/tierId"],
        [{ tierId: "gold", interval: "monthly" }, "/tierId"],
        [{ tierId: "free", interval: "monthly" }, "/tierId"],
        [{ tierId: "pro", interval: "weekly" }, "/interval"],
      ];
      for (const [body, pointer] of cases) {
        const res = await checkout(body, cookie);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(res.headers.get("content-type")).toContain("application/problem+json");
        expect(res.json.errors.map((e: { pointer: string }) => e.pointer)).toContain(pointer);
      }
      expect(stripe.checkouts).toHaveLength(0);
    });

    it("answers 400 when no price is configured for that tier and interval", async () => {
      const { cookie } = await signUp(server);
      const res = await checkout({ tierId: "pro", interval: "monthly" }, cookie); // STRIPE_PRICE_PRO is not set
      expect(res.status).toBe(400);
      expect(res.json).toMatchObject({ status: 400, code: "PRICE_NOT_CONFIGURED" });
    });

    it("answers 502, without Stripe's words, when Stripe refuses the checkout", async () => {
      const { cookie } = await signUp(server);
      const res = await checkout({ tierId: "plus", interval: "annual" }, cookie);
      expect(res.status).toBe(502);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
      expect(res.text).not.toContain(STALE_PRICE);
    });

    it("creates a Stripe Checkout session through the SDK and answers its url", async () => {
      const person = await signUp(server);
      const res = await checkout({ tierId: "pro", interval: "annual" }, person.cookie);
      expect(res.status, res.text).toBe(200);
      expect(res.headers.get("cache-control")).toBe("no-store");
      expect(res.json.url).toMatch(/^https:\/\/checkout\.stripe\.test\/c\/pay\/cs_test_/);
      const sent = stripe.checkouts.at(-1)!;
      expect(sent).toMatchObject({
        mode: "subscription",
        "line_items[0][price]": PRICES.proAnnual,
        "line_items[0][quantity]": "1",
        client_reference_id: person.user.id,
        "metadata[tier]": "pro",
        "metadata[interval]": "annual",
        "subscription_data[metadata][tier]": "pro",
        success_url: `${server.url}/account?subscription=success`,
        cancel_url: `${server.url}/account?subscription=cancelled`,
        customer_email: person.email,
      });
    });
  });

  describe("POST /api/subscription/webhook: signature (spec, Events)", () => {
    const event = () => signedEvent(WEBHOOK_SECRET, "checkout.session.completed", completedCheckout("nobody", "plus"));

    it("refuses an event without a Stripe-Signature header", async () => {
      const res = await webhook(server, { payload: event().payload });
      expect(res.status).toBe(400);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
      expect(res.json.code).toBe("INVALID_SIGNATURE");
    });

    it("refuses a wrong signature, another secret's, and a body changed after signing", async () => {
      const good = event();
      const forged = signedEvent("whsec_someone_else", "checkout.session.completed", completedCheckout("nobody", "plus"));
      for (const attempt of [
        { payload: good.payload, signature: "t=1,v1=deadbeef" },
        { payload: good.payload, signature: "garbage" },
        forged,
        { payload: good.payload.replace('"plus"', '"pro"'), signature: good.signature },
      ]) {
        const res = await webhook(server, attempt);
        expect(res.status).toBe(400);
        expect(res.json.code).toBe("INVALID_SIGNATURE");
      }
      const ids = [good, forged].map((e) => JSON.parse(e.payload).id as string);
      expect(await server.db.selectFrom("stripeEvent").selectAll().where("eventId", "in", ids).execute()).toHaveLength(0);
    });

    it("refuses a correctly signed but stale event (timestamp past the tolerance)", async () => {
      const stale = signedEvent(WEBHOOK_SECRET, "checkout.session.completed", completedCheckout("nobody", "plus"), { timestamp: Math.floor(Date.now() / 1000) - 600 });
      const res = await webhook(server, stale);
      expect(res.status).toBe(400);
      expect(res.json.code).toBe("INVALID_SIGNATURE");
    });
  });

  describe("checkout.session.completed: payment, mint queue, worker", () => {
    it("records the payment once, however often the event is delivered", async () => {
      const person = await signUp(server);
      const session = completedCheckout(person.user.id, "plus");
      const event = signedEvent(WEBHOOK_SECRET, "checkout.session.completed", session);
      const first = await webhook(server, event);
      expect(first.status, first.text).toBe(200);
      expect(first.json).toEqual({ received: true });
      // Redelivered as is (fresh signature, same event id), and twice at once.
      const again = signedEvent(WEBHOOK_SECRET, "checkout.session.completed", session, { id: JSON.parse(event.payload).id });
      const repeats = await Promise.all([webhook(server, again), webhook(server, again), webhook(server, event)]);
      for (const res of repeats) expect(res.json).toEqual({ received: true, duplicate: true });
      const payments = await server.db.selectFrom("subscriptionPayment").selectAll().where("userId", "=", person.user.id).execute();
      expect(payments).toHaveLength(1);
      expect(payments[0]).toMatchObject({ tier: "plus", interval: "monthly", paymentStatus: "paid", paymentIntentId: session.payment_intent, currency: "usd" });
      expect(Number(payments[0]!.amountTotal)).toBe(1000);
      expect(await server.db.selectFrom("mintJob").selectAll().where("userId", "=", person.user.id).execute()).toHaveLength(1);
    });

    it("retries a failed mint with backoff and completes it exactly once, to the buyer's wallet", async () => {
      const person = await signUp(server);
      const address = "1BuyerWa11etAddressxxxxxxxxxxxxxxx";
      walletOf.set(person.user.id, address);
      const job = await jobAfterPayment(server, WEBHOOK_SECRET, completedCheckout(person.user.id, "pro"));
      expect(job).toMatchObject({ status: "done", walletAddress: address, tier: "pro", lastError: null });
      expect(Number(job.attempts)).toBe(1); // one failed attempt before the one that succeeded
      expect(job.nftOrigin).toMatch(/^[0-9a-f]{64}_0$/);
      const calls = mint.requests.filter((r) => r.body.paymentId === job.paymentId);
      expect(calls).toHaveLength(2);
      expect(new Set(calls.map((c) => c.idempotencyKey))).toEqual(new Set([job.id]));
      expect(calls[0]!.authorization).toBe("Bearer mint-token");
      expect(calls[1]!.body).toMatchObject({ tier: "pro", walletAddress: address, userId: person.user.id });
      // Done means done: later polls do not mint it again.
      await new Promise((r) => setTimeout(r, 400));
      expect(mint.requests.filter((r) => r.body.paymentId === job.paymentId)).toHaveLength(2);
    });

    it("does not complete a mint whose answer names no origin outpoint: no ordinal could ever count as that tier NFT", async () => {
      const person = await signUp(server);
      walletOf.set(person.user.id, ODD_WALLET);
      const job = await jobAfterPayment(server, WEBHOOK_SECRET, completedCheckout(person.user.id, "plus"), { ready: (row) => /origin outpoint/.test(row.lastError ?? "") });
      // Failed attempts (retried with backoff, then `failed` for manual handling), never done.
      expect(job.status).not.toBe("done");
      expect(job.nftOrigin).toBeNull();
      expect(Number(job.attempts)).toBeGreaterThanOrEqual(2);
    });

    it("keeps the job waiting, with the reason, while the buyer has no connected wallet", async () => {
      const person = await signUp(server);
      const session = completedCheckout(person.user.id, "plus");
      await webhook(server, signedEvent(WEBHOOK_SECRET, "checkout.session.completed", session));
      const payment = (await paymentOf(server, session.id))!;
      const job = await until("the job to wait", async () => {
        const row = await jobOf(server, payment.id);
        return row?.lastError ? row : null;
      });
      expect(job).toMatchObject({ status: "pending", lastError: expect.stringMatching(/no connected wallet/) });
      expect(Number(job.attempts)).toBe(0);
      // Once a wallet is connected, the next look mints.
      walletOf.set(person.user.id, "1LaterWa11etxxxxxxxxxxxxxxxxxxxxx");
      const done = await until("the mint after connecting", async () => {
        const row = await jobOf(server, payment.id);
        return row?.status === "done" ? row : null;
      });
      expect(done.walletAddress).toBe("1LaterWa11etxxxxxxxxxxxxxxxxxxxxx");
    });

    it("keeps running when the database fails under it", async () => {
      const errors: string[] = [];
      const logger = { debug() {}, info() {}, warn() {}, error: (message: string) => void errors.push(message) };
      const broken = {
        selectFrom() {
          throw new Error("connection refused");
        },
      };
      const worker = startMintWorker({ db: broken as never, minter: { mint: async () => ({ nftOrigin: "x" }) }, wallets, logger, pollMs: 10 });
      await until("two failed ticks", async () => errors.length >= 2);
      await worker.stop();
      expect(errors[0]).toMatch(/tick failed/);
    });
  });

  describe("refunds and disputes are flagged for manual handling only", () => {
    it("flags the payment on charge.refunded and on charge.dispute.created, and undoes nothing", async () => {
      const person = await signUp(server);
      const session = completedCheckout(person.user.id, "plus");
      await webhook(server, signedEvent(WEBHOOK_SECRET, "checkout.session.completed", session));
      const charge = { id: `ch_${randomBytes(6).toString("hex")}`, object: "charge", payment_intent: session.payment_intent, amount: 1000, amount_refunded: 1000, currency: "usd", refunded: true };
      const refund = await webhook(server, signedEvent(WEBHOOK_SECRET, "charge.refunded", charge));
      expect(refund.status).toBe(200);
      const refunded = (await paymentOf(server, session.id))!;
      expect(refunded.flag).toBe("refunded");
      expect(refunded.flagDetail).toContain(charge.id);
      expect(refunded.flaggedAt).toBeTruthy();

      const dispute = { id: `dp_${randomBytes(6).toString("hex")}`, object: "dispute", charge: charge.id, payment_intent: session.payment_intent, amount: 1000, currency: "usd", reason: "fraudulent", status: "needs_response" };
      expect((await webhook(server, signedEvent(WEBHOOK_SECRET, "charge.dispute.created", dispute))).status).toBe(200);
      const disputed = (await paymentOf(server, session.id))!;
      expect(disputed.flag).toBe("disputed");
      expect(disputed.flagDetail).toContain("fraudulent");
      expect(disputed.paymentStatus).toBe("paid");
      // The mint job is left alone.
      expect(await jobOf(server, disputed.id)).toBeTruthy();
    });

    it("acknowledges a refund of a payment that is not ours", async () => {
      const charge = { id: "ch_unknown", object: "charge", payment_intent: "pi_unknown", amount: 100, amount_refunded: 100, currency: "usd" };
      const res = await webhook(server, signedEvent(WEBHOOK_SECRET, "charge.refunded", charge));
      expect(res.status).toBe(200);
    });
  });

  describe("GET /api/subscription/status (tier from NFT ownership)", () => {
    it("answers 401 without a session, on both mounts", async () => {
      for (const path of ["/api/subscription/status", "/api/auth/subscription/status"]) {
        const res = await server.api(path);
        expect(res.status, path).toBe(401);
        expect(res.headers.get("content-type")).toContain("application/problem+json");
      }
    });

    it("answers free and active without a tier NFT", async () => {
      const { cookie } = await signUp(server);
      const res = await server.api("/api/subscription/status", { cookie });
      expect(res.status).toBe(200);
      expect(res.headers.get("cache-control")).toBe("no-store");
      expect(res.json).toEqual({ tier: "free", isActive: true });
    });

    it("answers the tier of the NFT the user owns, the same on both mounts, and puts it on the user and the session", async () => {
      const person = await signUp(server);
      owned.set(person.user.id, { tier: "plus", nftOrigin: `${"ab".repeat(32)}_0`, walletAddress: "1PlusHo1derxxxxxxxxxxxxxxxxxxxxxx" });
      const res = await server.api("/api/subscription/status", { cookie: person.cookie });
      expect(res.status).toBe(200);
      expect(res.json).toMatchObject({ tier: "plus", isActive: true, nftOrigin: `${"ab".repeat(32)}_0`, walletAddress: "1PlusHo1derxxxxxxxxxxxxxxxxxxxxxx" });
      expect(Date.parse(res.json.lastVerified)).toBeGreaterThan(Date.now() - 60_000);
      const published = await server.api("/api/auth/subscription/status", { cookie: person.cookie });
      expect(published.json).toEqual(res.json); // cached: the same lastVerified
      const session = await server.api("/api/auth/get-session", { cookie: person.cookie });
      expect(session.json.user.subscriptionTier).toBe("plus");
      expect(session.json.session.subscriptionTier).toBe("plus");
    });

    it("answers 503 when ownership cannot be checked and nothing was verified before; limits use the recorded tier", async () => {
      const person = await signUp(server);
      unreachable.add(person.user.id);
      const res = await server.api("/api/subscription/status", { cookie: person.cookie });
      expect(res.status).toBe(503);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
      expect(res.json.code).toBe("OWNERSHIP_UNAVAILABLE");
      const web = { client_name: "Fallback", redirect_uris: ["https://rp.example.com/cb"], token_endpoint_auth_method: "none" };
      expect((await server.api("/api/auth/oauth2/create-client", { cookie: person.cookie, body: web })).status).toBeLessThan(300);
      expect((await server.api("/api/auth/oauth2/create-client", { cookie: person.cookie, body: web })).status).toBe(403);
    });

    it("starts new sessions with the user's tier", async () => {
      const person = await signUp(server);
      const session = await server.api("/api/auth/get-session", { cookie: person.cookie });
      expect(session.json.session.subscriptionTier).toBe("free");
      expect(session.json.user.subscriptionTier).toBe("free");
    });
  });

  describe("OAuth clients per tier (free 1, plus 10, pro unlimited)", () => {
    const web = { client_name: "Tiered", redirect_uris: ["https://rp.example.com/cb"], token_endpoint_auth_method: "none" };
    const create = (cookie: string) => server.api("/api/auth/oauth2/create-client", { cookie, body: web });
    const register = (cookie?: string) => server.api("/api/auth/oauth2/register", { cookie, body: web });

    it("free: one client, then 403 on create-client and on signed-in registration", async () => {
      const person = await signUp(server);
      expect((await create(person.cookie)).status).toBeLessThan(300);
      const refused = await create(person.cookie);
      expect(refused.status).toBe(403);
      expect(refused.json).toMatchObject({ code: "CLIENT_LIMIT_REACHED", tier: "free", limit: 1 });
      expect(refused.json.message).toMatch(/Free tier allows 1 OAuth client/);
      const viaRegister = await register(person.cookie);
      expect(viaRegister.status).toBe(403);
      expect(viaRegister.json).toMatchObject({ error: "access_denied", code: "CLIENT_LIMIT_REACHED" });
      // A session token as a bearer is the same person.
      const viaBearer = await server.api("/api/auth/oauth2/create-client", { body: web, headers: { authorization: `Bearer ${person.token}` } });
      expect(viaBearer.status).toBe(403);
      expect(await server.db.selectFrom("oauthClient").select("id").where("userId", "=", person.user.id).execute()).toHaveLength(1);
    });

    it("plus: ten clients, then 403", async () => {
      const person = await signUp(server);
      owned.set(person.user.id, { tier: "plus", nftOrigin: `${"cd".repeat(32)}_0`, walletAddress: "1Plusxxxxxxxxxxxxxxxxxxxxxxxxxxxx" });
      for (let i = 0; i < 10; i++) expect((await (i % 2 ? register(person.cookie) : create(person.cookie))).status, `client ${i + 1}`).toBeLessThan(300);
      const refused = await create(person.cookie);
      expect(refused.status).toBe(403);
      expect(refused.json).toMatchObject({ code: "CLIENT_LIMIT_REACHED", tier: "plus", limit: 10 });
    });

    it("pro: no limit", async () => {
      const person = await signUp(server);
      owned.set(person.user.id, { tier: "pro", nftOrigin: `${"ef".repeat(32)}_0`, walletAddress: "1Proxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" });
      for (let i = 0; i < 12; i++) expect((await create(person.cookie)).status, `client ${i + 1}`).toBeLessThan(300);
    });

    it("anonymous sandbox registration (no session) is not limited", async () => {
      for (let i = 0; i < 3; i++) expect((await register()).status).toBe(201);
    });
  });
});

describe("without a Stripe key or a minting service", () => {
  beforeAll(async () => {
    bare = await startTestServer({ STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET }, { subscriptions: { wallets } });
  });
  afterAll(async () => {
    await bare?.close();
  });

  it("answers 503 when Stripe is not configured", async () => {
    const { cookie } = await signUp(bare);
    const res = await checkout({ tierId: "plus", interval: "monthly" }, cookie, bare);
    expect(res.status).toBe(503);
    expect(res.json.code).toBe("PAYMENTS_NOT_CONFIGURED");
  });

  it("keeps the job waiting, with the reason, when no minting service is configured", async () => {
    const person = await signUp(bare);
    walletOf.set(person.user.id, "1SomeWa11etxxxxxxxxxxxxxxxxxxxxxx");
    const session = completedCheckout(person.user.id, "plus");
    expect((await webhook(bare, signedEvent(WEBHOOK_SECRET, "checkout.session.completed", session))).status).toBe(200);
    const payment = (await paymentOf(bare, session.id))!;
    const job = (await jobOf(bare, payment.id))!;
    expect(job).toMatchObject({ status: "pending", lastError: expect.stringContaining("MINT_SERVICE_URL") });
    expect(Number(job.attempts)).toBe(0);
  });
});
