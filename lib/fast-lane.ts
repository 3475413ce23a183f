import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Metrics } from "./metrics.js";
import { take, type Limiters } from "./rate-limit.js";
import { STRICT_TRANSPORT_SECURITY } from "./strict-transport.js";
import { CLIENT_IP_HEADER } from "./client-address.js";
import { hasNulInForm } from "./validate.js";
import { hasNulInBasic } from "./request-body.js";

/**
 * The machine routes' fast lane: a few exact routes (discovery, JWKS, introspection: routes/fast-lane.ts) that
 * servers and relying parties call thousands of times a second, answered from the Node request
 * before the Hono app builds its Web Request, runs its middleware and better-auth its pipeline.
 * The lane does what the app does around every answer, for its own answers:
 *   - counts and times them in the same metrics, under the route label the app uses;
 *   - sends X-Request-Id (the caller's when short and plain, as app.ts keeps it, else a new
 *     one) and, for an https AUTH_URL, Strict-Transport-Security;
 *   - for a route with a credential limit, applies lib/limits.ts as lib/auth-limits.ts does:
 *     the address's failures are checked and the credential's budget charged first, in one
 *     step (lib/rate-limit.ts take: one Redis script), and the charge is given back (`refund`)
 *     whenever the lane does not answer, before the app counts the request its own way; so
 *     only answers the lane gave, to verified credentials, stay charged to a credential.
 * Anything else goes to the app untouched: another method, a query string, a body that is
 * not a small declared form, a NUL in the Basic credentials or the form, a limit reached
 * (the app answers the 429), an answer the route does not give itself (null: the generic
 * endpoint answers, e.g. every refusal), and any error (the app answers it its own way, 503
 * included). A body the lane has read is handed over as the request's `rawBody`, which
 * @hono/node-server reads instead of the socket.
 */
export interface LaneRequest {
  headers: IncomingMessage["headers"];
  /** The form text of a POST, "" for a GET. */
  body: string;
}

export interface LaneAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface LaneRoute {
  method: "GET" | "POST";
  path: string;
  /** The label the app's request metrics give this route (lib/request-metrics.ts). */
  label: string;
  /** A credential limit of lib/limits.ts and its key for this request, when the route has one. */
  credential?: (req: LaneRequest) => { limit: "client" | "session" | "token"; key: string } | null;
  /**
   * Starts the answer's reads before the limiter's step, for a route with a credential limit:
   * a read from Redis then goes out right behind the limiter's script, both in flight at once,
   * instead of a round trip after it. Reads only: when the limit refuses,
   * what was read is dropped, and the answer is still given only after the step allowed it.
   */
  early?: (req: LaneRequest) => void;
  /** The answer, or null to leave the request to the app; at once when it needs no wait. */
  answer(req: LaneRequest): LaneAnswer | null | Promise<LaneAnswer | null>;
}

export interface FastLaneOptions {
  routes: LaneRoute[];
  metrics: Metrics;
  /** null when limits are off (RATE_LIMIT_ENABLED=false). */
  limiters: Limiters | null;
  /** Whether AUTH_URL is https (Strict-Transport-Security on every answer). */
  https: boolean;
}

/** A credential's charge: what a route's `credential` names. */
type Charge = NonNullable<ReturnType<NonNullable<LaneRoute["credential"]>>>;

/** Largest form the lane reads itself; a larger one goes to the app (and its body limit). */
const MAX_LANE_BODY = 16 * 1024;
const FORM = "application/x-www-form-urlencoded";

/** The X-Request-Id of an answer: the caller's when short and plain (app.ts), else a new one. */
function requestIdOf(given: string | string[] | undefined): string {
  return typeof given === "string" && given.length > 0 && given.length <= 64 && !/[^\w\-=]/.test(given) ? given : randomUUID();
}

/**
 * The body of `req`, `length` bytes. One listener per event, removed once settled: a request's
 * stream closes after its end, and a settled read must not build an Error on every request.
 */
function readBody(req: IncomingMessage, length: number): Promise<Buffer> {
  return new Promise((ok, fail) => {
    let first: Buffer | undefined;
    let chunks: Buffer[] | undefined;
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (!first) first = chunk;
      else (chunks ??= [first]).push(chunk);
    };
    const settle = (why: "end" | "error" | "close", err?: Error) => {
      req.off("data", onData).off("end", onEnd).off("error", onError).off("close", onClose);
      if (why === "end" && size === length) return ok(chunks ? Buffer.concat(chunks) : (first ?? Buffer.alloc(0)));
      // A client gone before the end of its body: the app is not called for it either.
      fail(err ?? new Error(why === "end" ? "body length mismatch" : "request closed before its body ended"));
    };
    const onEnd = () => settle("end");
    const onError = (err: Error) => settle("error", err);
    const onClose = () => settle("close");
    req.on("data", onData).on("end", onEnd).on("error", onError).on("close", onClose);
  });
}

/**
 * `serve(req, res, app)`: answers the request in the lane, or hands it to `app` (the Node
 * listener of the Hono app). Returns at once; `app` is called at most once.
 */
export function createFastLane({ routes, metrics, limiters, https }: FastLaneOptions) {
  const byKey = new Map(routes.map((r) => [`${r.method} ${r.path}`, r]));

  /** Gives a charge back (refund never fails: a store failure leaves the count as it is). */
  async function giveBack(charged: Charge | undefined) {
    if (charged && limiters) await limiters[charged.limit].refund(charged.key);
  }

  /** The request to the app, the lane's charge given back first (the app counts it its own way). */
  async function handOver(req: IncomingMessage, res: ServerResponse, app: (req: IncomingMessage, res: ServerResponse) => unknown, charged: Charge | undefined) {
    await giveBack(charged);
    return app(req, res);
  }

  async function run(route: LaneRoute, req: IncomingMessage, res: ServerResponse, app: (req: IncomingMessage, res: ServerResponse) => unknown) {
    const started = process.hrtime.bigint();
    let body = "";
    /** The credential's charge, while the lane has not answered (given back if it does not). */
    let charged: Charge | undefined;
    try {
      if (route.method === "POST") {
        const bytes = await readBody(req, Number(req.headers["content-length"]));
        // From here on the app reads these bytes, not the socket.
        (req as IncomingMessage & { rawBody?: Buffer }).rawBody = bytes;
        body = bytes.toString("utf8");
        if (hasNulInForm(body)) return app(req, res);
      }
      const input: LaneRequest = { headers: req.headers, body };
      const credential = limiters && route.credential ? route.credential(input) : null;
      if (limiters && route.credential) {
        if (!credential) return app(req, res);
        const address = String(req.headers[CLIENT_IP_HEADER] ?? "unknown");
        route.early?.(input);
        // In memory the step answers at once; with Redis, one round trip.
        const step = take(limiters, ["authFailures", address], [credential.limit, credential.key]);
        const taken = step instanceof Promise ? await step : step;
        if (taken.charged) charged = credential;
        if (!taken.allowed) return await handOver(req, res, app, charged);
      }
      const pending = route.answer(input);
      const answer = pending instanceof Promise ? await pending : pending;
      if (!answer) return await handOver(req, res, app, charged);
      // Names and values in one flat list (writeHead takes either form): no object copied and
      // grown per answer. The lane's own headers replace a route's of the same name.
      const headers: (string | number)[] = [];
      for (const name in answer.headers) if (name !== "content-length" && name !== "x-request-id") headers.push(name, answer.headers[name]!);
      headers.push("content-length", Buffer.byteLength(answer.body), "x-request-id", requestIdOf(req.headers["x-request-id"]));
      if (https) headers.push("strict-transport-security", STRICT_TRANSPORT_SECURITY);
      res.writeHead(answer.status, headers);
      res.end(answer.body);
      // Answered: the charge stays.
      charged = undefined;
      const labels = { method: route.method, route: route.label, status: String(answer.status) };
      metrics.requests.inc(labels);
      metrics.requestDuration.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
    } catch {
      // The app answers it its own way (a 503 for an unreachable database, say), and logs it;
      // a request whose body never arrived has no one left to answer.
      if (!res.headersSent && !req.destroyed) return await handOver(req, res, app, charged);
      await giveBack(charged);
    }
  }

  return function serve(req: IncomingMessage, res: ServerResponse, app: (req: IncomingMessage, res: ServerResponse) => unknown): void {
    const route = byKey.get(`${req.method} ${req.url}`);
    if (!route || hasNulInBasic(req.headers.authorization)) return void app(req, res);
    if (route.method === "GET") {
      if (req.headers["transfer-encoding"] || (req.headers["content-length"] !== undefined && req.headers["content-length"].trim() !== "0")) return void app(req, res);
    } else {
      const length = Number(req.headers["content-length"]);
      const type = req.headers["content-type"]?.toLowerCase() ?? "";
      if (req.headers["transfer-encoding"] || !(length > 0 && length <= MAX_LANE_BODY) || !type.includes(FORM)) return void app(req, res);
    }
    void run(route, req, res, app);
  };
}
