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

/**
 * A local stand-in for the part of Stripe's API we call (POST /v1/checkout/sessions), spoken
 * to by the real SDK through STRIPE_API_BASE_URL. Form bodies are kept flat as the SDK sends
 * them (`line_items[0][price]`). Prices it does not know answer Stripe's 400 error shape.
 * `checkoutPage`: each session's url is a page on the stand-in that redirects to its success_url
 * (a buyer who paid), for browser tests; otherwise an address on Stripe's pattern that goes nowhere.
 */
export async function startStripeStandIn(options: { secretKey: string; prices: string[]; checkoutPage?: boolean }) {
  const checkouts: Array<Record<string, string>> = [];
  const successUrls = new Map<string, string>();
  const server = createServer(async (req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json", "request-id": `req_${randomBytes(6).toString("hex")}` });
      res.end(JSON.stringify(body));
    };
    // With `checkoutPage`, the session's url is a page here that "pays" at once: straight back to its success_url.
    const page = /^\/c\/pay\/(cs_test_[0-9a-f]+)$/.exec(req.url ?? "");
    if (req.method === "GET" && page) {
      const back = successUrls.get(page[1]!);
      return back ? void res.writeHead(303, { location: back }).end() : void res.writeHead(404).end();
    }
    const form = Object.fromEntries(new URLSearchParams(await bodyOf(req)));
    if (req.headers.authorization !== `Bearer ${options.secretKey}`) return send(401, { error: { type: "invalid_request_error", message: "Invalid API Key provided" } });
    if (req.method !== "POST" || req.url !== "/v1/checkout/sessions") return send(404, { error: { type: "invalid_request_error", message: `Unrecognized request URL (${req.method}: ${req.url})` } });
    const price = form["line_items[0][price]"];
    if (!price || !options.prices.includes(price)) return send(400, { error: { type: "invalid_request_error", code: "resource_missing", param: "line_items[0][price]", message: `No such price: '${price}'` } });
    checkouts.push(form);
    const id = `cs_test_${randomBytes(12).toString("hex")}`;
    if (form.success_url) successUrls.set(id, form.success_url);
    send(200, {
      id,
      object: "checkout.session",
      mode: form.mode,
      url: options.checkoutPage ? `${url}/c/pay/${id}` : `https://checkout.stripe.test/c/pay/${id}`,
      success_url: form.success_url,
      cancel_url: form.cancel_url,
      client_reference_id: form.client_reference_id ?? null,
      metadata: { userId: form["metadata[userId]"], tier: form["metadata[tier]"], interval: form["metadata[interval]"] },
      payment_status: "unpaid",
      status: "open",
    });
  });
  const url = await listen(server);
  return { url, checkouts, close: () => close(server) };
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
