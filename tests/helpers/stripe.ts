import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import Stripe from "stripe";
import type { PaidTierId } from "../../plugins/subscriptions/tiers.js";
import type { TestServer } from "./server.js";

/** Reads a request body as text. */
async function bodyOf(req: IncomingMessage): Promise<string> {
  let text = "";
  for await (const chunk of req) text += chunk;
  return text;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  return `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
}

const close = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

/** Unix seconds, as Stripe writes times. */
export const unix = (date: Date | number) => Math.floor((typeof date === "number" ? date : date.getTime()) / 1000);
const stripeId = (prefix: string) => `${prefix}_${randomBytes(12).toString("hex")}`;

/**
 * A local stand-in for the parts of Stripe's API we call, spoken to by the real SDK through
 * STRIPE_API_BASE_URL: Checkout sessions (POST /v1/checkout/sessions; `mode: subscription` takes
 * only recurring prices, `mode: payment` only one-time ones, as Stripe checks), subscriptions
 * (GET /v1/subscriptions/:id), invoices (GET /v1/invoices/:id) and the customer portal
 * (POST /v1/billing_portal/sessions). Form bodies are kept flat as the SDK sends them
 * (`line_items[0][price]`). What it does not know answers Stripe's error shape.
 *
 * Stripe's side of the story is played by the test: `pay` (the buyer paid a subscription
 * Checkout: a customer, a subscription and its first invoice), `renew` (the next invoice paid),
 * `failPayment`, `cancel` (at period end, as the customer portal does) and `end` (the
 * subscription is over); each answers the object the matching webhook event carries.
 * `checkoutPage`: each session's url is a page on the stand-in that redirects to its success_url
 * (a buyer who paid), and each portal session's url one that redirects to its return_url, for
 * browser tests; otherwise an address on Stripe's pattern that goes nowhere.
 */
export async function startStripeStandIn(options: { secretKey: string; prices: string[]; oneTimePrices?: string[]; checkoutPage?: boolean }) {
  const checkouts: Array<Record<string, string>> = [];
  const portalSessions: Array<Record<string, string>> = [];
  const sessions = new Map<string, Record<string, unknown>>();
  const subscriptions = new Map<string, StandInSubscription>();
  const invoices = new Map<string, Record<string, unknown>>();
  const customers = new Set<string>();
  const successUrls = new Map<string, string>();
  const oneTime = options.oneTimePrices ?? [];
  const server = createServer(async (req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json", "request-id": `req_${randomBytes(6).toString("hex")}` });
      res.end(JSON.stringify(body));
    };
    const invalid = (message: string, param?: string, code?: string) => send(400, { error: { type: "invalid_request_error", message, ...(param ? { param } : {}), ...(code ? { code } : {}) } });
    const missing = (what: string, id: string) => send(404, { error: { type: "invalid_request_error", code: "resource_missing", message: `No such ${what}: '${id}'` } });
    // With `checkoutPage`, the session's url is a page here that "pays" at once: straight back to its success_url.
    const page = /^\/(?:c\/pay|p\/session)\/((?:cs_test|bps)_[0-9a-f]+)$/.exec(req.url ?? "");
    if (req.method === "GET" && page) {
      const back = successUrls.get(page[1]!);
      return back ? void res.writeHead(303, { location: back }).end() : void res.writeHead(404).end();
    }
    const form = Object.fromEntries(new URLSearchParams(await bodyOf(req)));
    if (req.headers.authorization !== `Bearer ${options.secretKey}`) return send(401, { error: { type: "invalid_request_error", message: "Invalid API Key provided" } });
    const path = (req.url ?? "").split("?")[0]!;
    const got = /^\/v1\/(subscriptions|invoices)\/([A-Za-z0-9_]+)$/.exec(path);
    if (req.method === "GET" && got) {
      const found = got[1] === "subscriptions" ? subscriptions.get(got[2]!) : invoices.get(got[2]!);
      return found ? send(200, found) : missing(got[1] === "subscriptions" ? "subscription" : "invoice", got[2]!);
    }
    if (req.method === "POST" && path === "/v1/billing_portal/sessions") {
      const customer = form.customer;
      if (!customer) return invalid("Missing required param: customer.", "customer", "parameter_missing");
      if (!customers.has(customer)) return invalid(`No such customer: '${customer}'`, "customer", "resource_missing");
      portalSessions.push(form);
      const id = stripeId("bps");
      if (form.return_url) successUrls.set(id, form.return_url);
      const portalUrl = options.checkoutPage ? `${url}/p/session/${id}` : `https://billing.stripe.test/p/session/${id}`;
      return send(200, { id, object: "billing_portal.session", customer, return_url: form.return_url ?? null, url: portalUrl, livemode: false, created: unix(Date.now()) });
    }
    if (req.method !== "POST" || path !== "/v1/checkout/sessions") return send(404, { error: { type: "invalid_request_error", message: `Unrecognized request URL (${req.method}: ${req.url})` } });
    const price = form["line_items[0][price]"];
    const recurring = Boolean(price && options.prices.includes(price));
    if (!price || (!recurring && !oneTime.includes(price))) return invalid(`No such price: '${price}'`, "line_items[0][price]", "resource_missing");
    if (form.mode === "subscription" && !recurring) return invalid("The price specified is set to `type=one_time` but this field only accepts prices with `type=recurring`.", "line_items[0][price]");
    if (form.mode === "payment" && recurring) return invalid("You specified `payment` mode but passed a recurring price.", "line_items[0][price]");
    if (form.mode === "payment" && form["subscription_data[metadata][tier]"]) return invalid("subscription_data can only be used in subscription mode.", "subscription_data");
    if (form.mode === "subscription" && Object.keys(form).some((k) => k.startsWith("payment_intent_data"))) return invalid("You can not pass `payment_intent_data` in `subscription` mode.", "payment_intent_data");
    if (form.customer && !customers.has(form.customer)) return invalid(`No such customer: '${form.customer}'`, "customer", "resource_missing");
    if (form.customer && form.customer_email) return invalid("You may only specify one of these parameters: customer, customer_email.", "customer_email");
    checkouts.push(form);
    const id = `cs_test_${randomBytes(12).toString("hex")}`;
    if (form.success_url) successUrls.set(id, form.success_url);
    const session = {
      id,
      object: "checkout.session",
      mode: form.mode,
      url: options.checkoutPage ? `${url}/c/pay/${id}` : `https://checkout.stripe.test/c/pay/${id}`,
      success_url: form.success_url,
      cancel_url: form.cancel_url,
      client_reference_id: form.client_reference_id ?? null,
      customer: form.customer ?? null,
      customer_email: form.customer_email ?? null,
      metadata: { userId: form["metadata[userId]"], tier: form["metadata[tier]"], interval: form["metadata[interval]"] },
      subscription: null,
      payment_intent: null,
      amount_total: form["metadata[tier]"] === "pro" ? 5000 : 1000,
      currency: "usd",
      payment_status: "unpaid",
      status: "open",
    };
    sessions.set(id, { ...session, price, subscriptionMetadata: { userId: form["subscription_data[metadata][userId]"], tier: form["subscription_data[metadata][tier]"], interval: form["subscription_data[metadata][interval]"] } });
    send(200, session);
  });
  const url = await listen(server);

  /** A paid invoice of `sub` for the period up to its current end, kept for GET /v1/invoices/:id. */
  function invoiceOf(sub: StandInSubscription, start: number, status: "paid" | "open", reason: string) {
    const item = sub.items.data[0]!;
    const id = stripeId("in");
    const invoice = {
      id,
      object: "invoice",
      customer: sub.customer,
      status,
      billing_reason: reason,
      amount_paid: status === "paid" ? 1000 : 0,
      currency: "usd",
      attempted: true,
      parent: { type: "subscription_details", quote_details: null, subscription_details: { subscription: sub.id, metadata: sub.metadata } },
      lines: { object: "list", has_more: false, data: [{ id: stripeId("il"), object: "line_item", period: { start, end: item.current_period_end }, pricing: { price_details: { price: item.price.id } } }] },
    };
    invoices.set(id, invoice);
    return invoice;
  }

  const subscriptionOf = (id: string) => {
    const sub = subscriptions.get(id);
    if (!sub) throw new Error(`the stand-in has no subscription ${id}`);
    return sub;
  };

  return {
    url,
    checkouts,
    portalSessions,
    subscriptions,
    close: () => close(server),
    /**
     * The buyer paid Checkout Session `sessionId` (subscription mode): its customer (a new one
     * unless the session named one), a subscription paid up to `periodEnd`, and the first
     * invoice. Answers the completed session as checkout.session.completed carries it;
     * `delayed`: a bank debit still under way (`payment_status: unpaid`, subscription incomplete).
     */
    pay(sessionId: string, periodEnd: Date, opts: { delayed?: boolean } = {}) {
      const session = sessions.get(sessionId);
      if (!session || session.mode !== "subscription") throw new Error(`the stand-in has no subscription Checkout ${sessionId}`);
      const customer = (session.customer as string | null) ?? stripeId("cus");
      customers.add(customer);
      const now = unix(Date.now());
      const sub: StandInSubscription = {
        id: stripeId("sub"),
        object: "subscription",
        customer,
        status: opts.delayed ? "incomplete" : "active",
        cancel_at_period_end: false,
        cancel_at: null,
        canceled_at: null,
        ended_at: null,
        metadata: session.subscriptionMetadata as Record<string, string>,
        items: { object: "list", data: [{ id: stripeId("si"), object: "subscription_item", price: { id: session.price as string, object: "price", type: "recurring" }, current_period_start: now, current_period_end: unix(periodEnd) }] },
      };
      subscriptions.set(sub.id, sub);
      const invoice = invoiceOf(sub, now, opts.delayed ? "open" : "paid", "subscription_create");
      const { price: _price, subscriptionMetadata: _meta, ...shown } = session;
      const completed = { ...shown, id: sessionId, customer, subscription: sub.id, invoice: invoice.id, status: "complete", payment_status: opts.delayed ? "unpaid" : "paid" };
      sessions.set(sessionId, { ...session, ...completed });
      return { session: completed, subscription: sub, invoice };
    },
    /** A delayed payment settled: the subscription turns active and its first invoice paid. */
    settle(subscriptionId: string) {
      const sub = subscriptionOf(subscriptionId);
      sub.status = "active";
      return sub;
    },
    /** The next invoice of the subscription is paid: its period runs to `periodEnd`; answers the invoice (invoice.paid). */
    renew(subscriptionId: string, periodEnd: Date) {
      const sub = subscriptionOf(subscriptionId);
      const item = sub.items.data[0]!;
      const start = item.current_period_end;
      item.current_period_start = start;
      item.current_period_end = unix(periodEnd);
      sub.status = "active";
      return invoiceOf(sub, start, "paid", "subscription_cycle");
    },
    /** The renewal charge failed: the subscription is past due; answers the open invoice (invoice.payment_failed). */
    failPayment(subscriptionId: string) {
      const sub = subscriptionOf(subscriptionId);
      sub.status = "past_due";
      const item = sub.items.data[0]!;
      return invoiceOf(sub, item.current_period_end, "open", "subscription_cycle");
    },
    /** Moved to another price in the customer portal; answers the subscription (customer.subscription.updated). */
    changePrice(subscriptionId: string, price: string) {
      const sub = subscriptionOf(subscriptionId);
      sub.items.data[0]!.price.id = price;
      return sub;
    },
    /** Cancelled in the customer portal, at the end of the period; answers the subscription (customer.subscription.updated). */
    cancel(subscriptionId: string) {
      const sub = subscriptionOf(subscriptionId);
      Object.assign(sub, { cancel_at_period_end: true, cancel_at: sub.items.data[0]!.current_period_end, canceled_at: unix(Date.now()) });
      return sub;
    },
    /** The subscription is over; answers it (customer.subscription.deleted). */
    end(subscriptionId: string) {
      const sub = subscriptionOf(subscriptionId);
      Object.assign(sub, { status: "canceled", ended_at: unix(Date.now()) });
      return sub;
    },
  };
}

/** A subscription as the stand-in keeps and answers it (the fields we read, and a few more). */
export interface StandInSubscription {
  id: string;
  object: "subscription";
  customer: string;
  status: string;
  cancel_at_period_end: boolean;
  cancel_at: number | null;
  canceled_at: number | null;
  ended_at: number | null;
  metadata: Record<string, string>;
  items: { object: "list"; data: Array<{ id: string; object: "subscription_item"; price: { id: string; object: "price"; type: "recurring" }; current_period_start: number; current_period_end: number }> };
}

/**
 * A local minting service: answers 500 to the first `failFirst` requests for each
 * Idempotency-Key (one job), then `{origin}`: a new outpoint, or what `originFor` says for
 * that request. Every request is kept.
 */
export async function startMintStandIn(options: { failFirst: number; originFor?: (body: Record<string, unknown>) => string | undefined }) {
  const requests: Array<{ idempotencyKey: string | undefined; authorization: string | undefined; body: Record<string, unknown> }> = [];
  const server = createServer(async (req, res) => {
    const body = JSON.parse((await bodyOf(req)) || "{}") as Record<string, unknown>;
    requests.push({ idempotencyKey: req.headers["idempotency-key"] as string | undefined, authorization: req.headers.authorization, body });
    const key = req.headers["idempotency-key"];
    if (requests.filter((r) => r.idempotencyKey === key).length <= options.failFirst) {
      res.writeHead(500, { "content-type": "application/json" });
      return res.end(JSON.stringify({ error: "indexer busy" }));
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ origin: options.originFor?.(body) ?? `${randomBytes(32).toString("hex")}_0` }));
  });
  const url = await listen(server);
  return { url: `${url}/mint`, requests, close: () => close(server) };
}

/** A Stripe event as Stripe sends it, with its Stripe-Signature header (timestamp in seconds). */
export function signedEvent(secret: string, type: string, object: Record<string, unknown>, opts: { id?: string; timestamp?: number } = {}) {
  const payload = JSON.stringify({
    id: opts.id ?? `evt_${randomBytes(12).toString("hex")}`,
    object: "event",
    api_version: "2025-01-01",
    created: Math.floor(Date.now() / 1000),
    type,
    livemode: false,
    pending_webhooks: 1,
    data: { object },
  });
  const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp: opts.timestamp });
  return { payload, signature };
}

/** POSTs a Stripe event to the webhook as Stripe would (signature header when given). */
export function webhook(target: TestServer, event: { payload: string; signature?: string }) {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (event.signature) headers["stripe-signature"] = event.signature;
  return target.api("/api/subscription/webhook", { method: "POST", body: event.payload, headers });
}

/** The Checkout Session of a paid checkout by `userId` for `tier`, as checkout.session.completed carries it. */
export function completedCheckout(userId: string, tier: PaidTierId, extra: Record<string, unknown> = {}) {
  const id = `cs_test_${randomBytes(8).toString("hex")}`;
  return {
    id,
    object: "checkout.session",
    client_reference_id: userId,
    metadata: { userId, tier, interval: "monthly" },
    payment_intent: `pi_${randomBytes(8).toString("hex")}`,
    amount_total: tier === "plus" ? 1000 : 5000,
    currency: "usd",
    payment_status: "paid",
    mode: "payment",
    ...extra,
  };
}

/** Polls `probe` until it answers something, or fails after `timeoutMs`. */
export async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The payment recorded for a Checkout Session, and the mint job of a payment. */
export const paymentOf = (target: TestServer, checkoutSessionId: string) =>
  target.db.selectFrom("subscriptionPayment").selectAll().where("checkoutSessionId", "=", checkoutSessionId).executeTakeFirst();
export const jobOf = (target: TestServer, paymentId: string) => target.db.selectFrom("mintJob").selectAll().where("paymentId", "=", paymentId).executeTakeFirst();
type MintJobRow = NonNullable<Awaited<ReturnType<typeof jobOf>>>;

/** Stripe reports the Checkout Session completed (signed with `webhookSecret`); the mint job it queued, once `ready` (by default: done). */
export async function jobAfterPayment(target: TestServer, webhookSecret: string, session: { id: string }, opts: { ready?: (job: MintJobRow) => boolean; timeoutMs?: number } = {}) {
  const ready = opts.ready ?? ((job) => job.status === "done");
  const delivered = await webhook(target, signedEvent(webhookSecret, "checkout.session.completed", session));
  if (delivered.status !== 200) throw new Error(`the webhook answered ${delivered.status}: ${delivered.text}`);
  const payment = await until("the payment", () => paymentOf(target, session.id));
  return until(
    "the mint job",
    async () => {
      const job = await jobOf(target, payment.id);
      return job && ready(job) ? job : null;
    },
    opts.timeoutMs,
  );
}
