/**
 * `npm run bench:soak` (issue 12, "Soak and fuzz"): one server instance on PostgreSQL (and
 * Redis when given) with the shipped defaults, rate limits included, under a fixed rate of
 * mixed traffic for a while; reports p50/p99 per route (as the driver saw them, and as the
 * server timed the same requests from their arrival to their answer's last byte), errors, and
 * the server's RSS sampled every second. Exits 1 when any request failed or the RSS grew by 10% or more after warm-up.
 *
 * The traffic, one operation at a time at a fixed rate (open loop: an operation starts on
 * schedule whether or not earlier ones have finished), in a repeating mix of ten:
 * userinfo ×3, introspection ×3, refresh grant ×2, key sign-in (Bitcoin-Auth, many distinct
 * keys in turn), authorization code flow (authorize + token, PKCE S256; two requests); beside
 * it, every 4 s, a backup sync (POST /api/backup/sync signed by a key: the spec limits it to
 * 20 a minute per address, and the soak sends from one). Each refresh token is used once: a pool holds
 * the live ones, every code flow adds a chain. A request counts as failed on a status other
 * than the route's success, a body that fails the route's check, a network error, or no
 * answer within 10 s. The driver acts as the parties it stands for: the relying party's
 * back-channel calls (token, userinfo, introspection) carry no Origin, as a server's do; the
 * key holders' Bitcoin-Auth tokens are signed on a worker thread (scripts/bench/signer.ts)
 * before each request's clock starts, so that signing never delays the driver's other answers.
 *
 * Settings (environment):
 * - SOAK_SECONDS: how long traffic runs (default 60).
 * - SOAK_RATE: operations per second, all routes together (default 20).
 * - SOAK_WARMUP: seconds before the RSS baseline and the latency figures (default a quarter of
 *   SOAK_SECONDS, at most 10).
 * - SOAK_KEYS: distinct key accounts signing in and syncing (default 50).
 * - DATABASE_URL, else TEST_DATABASE_URL: the PostgreSQL database to use as it is; with
 *   neither, a throwaway database is created on postgres://postgres@127.0.0.1:5432 and dropped
 *   at the end. Use a database you can throw away: the run creates accounts and clients in it.
 * - REDIS_URL, else TEST_REDIS_URL: Redis for the shared state (rate-limit counters, replay
 *   caches), when given.
 * Every other setting of the server comes from the environment as `npm start` reads it, so
 * the shipped defaults apply unless the environment says otherwise (the report says whether
 * the rate limiter is on). `--json` prints the result as JSON on stdout.
 *
 * Set-up enrols the key accounts inside the server process, through the key sign-up endpoint
 * without HTTP (the per-address sign-up limit would stretch set-up to minutes); the person,
 * the client and the first code flows go over HTTP as a relying party would. Everything
 * measured goes over HTTP.
 */
import { type ChildProcess, execFileSync } from "node:child_process";
import type { IncomingMessage, ServerResponse } from "node:http";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay, PerformanceObserver } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { PrivateKey } from "@bsv/sdk";
import { getAuthToken } from "bitcoin-auth";
import { bapIdFromPubkey } from "bsv-bap";
import pg from "pg";
import { authorizationCodeFlow, call, setUp, spawnServer, type CallResult } from "./bench.js";
import { workerSigner } from "./bench/signer.js";

const SELF = fileURLToPath(import.meta.url);
const KEY_SIGN_IN = "/api/auth/sign-in/sigma";
const KEY_SIGN_UP = "/api/auth/sign-up/sigma";
const SYNC = "/api/backup/sync";
const REQUEST_TIMEOUT_MS = 10_000;
/** PerformanceEntry `detail.kind` of a gc entry (perf_hooks constants NODE_PERFORMANCE_GC_*). */
const GC_KINDS: Record<number, string> = { 1: "minor", 2: "major", 4: "incremental", 8: "weak callbacks" };
/** The header by which the driver names a measured request's route to the server (serve times those). */
const SERVER_TIMED = "x-soak-route";
/** RSS growth after warm-up that fails the run. */
export const MAX_RSS_GROWTH = 0.1;

function arg(name: string): string | undefined {
  const hit = process.argv.find((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  if (!hit) return undefined;
  return hit.includes("=") ? hit.slice(hit.indexOf("=") + 1) : "true";
}

// --- server side (child process) -------------------------------------------------------

async function serve(port: number) {
  const { loadEnv } = await import("../lib/env.js");
  const { start } = await import("../server.js");
  const url = `http://127.0.0.1:${port}`;
  const dir = mkdtempSync(join(tmpdir(), "idp-soak-"));
  const config = loadEnv({
    ...process.env,
    NODE_ENV: "development",
    PORT: String(port),
    HOST: "127.0.0.1",
    AUTH_URL: url,
    DATA_DIR: dir,
    BETTER_AUTH_SECRET: randomBytes(32).toString("base64url"),
    LOG_LEVEL: "error",
    AUTO_MIGRATE: "true",
  });
  const running = await start(config);
  // The server's own time for each measured request (the driver tags those, SERVER_TIMED):
  // from the request's arrival at the app's listener to the answer's last byte handed to the
  // socket. Beside the driver's figure, it tells the server's work and waits from the hops.
  const timed = new Map<string, number[]>();
  running.server.prependListener("request", (req: IncomingMessage, res: ServerResponse) => {
    const route = req.headers[SERVER_TIMED];
    if (typeof route !== "string") return;
    const began = performance.now();
    res.once("finish", () => {
      const list = timed.get(route) ?? [];
      list.push(performance.now() - began);
      timed.set(route, list);
    });
  });
  // Its garbage collector's pauses while requests are measured, by kind (node:perf_hooks).
  const pauses = new Map<string, number[]>();
  new PerformanceObserver((list) => {
    if (timed.size === 0) return;
    for (const entry of list.getEntries()) {
      const kind = GC_KINDS[(entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind ?? 0] ?? "other";
      const list = pauses.get(kind) ?? [];
      list.push(entry.duration);
      pauses.set(kind, list);
    }
  }).observe({ entryTypes: ["gc"] });
  const api = running.auth.api as unknown as Record<string, (ctx: { request: Request; headers: Headers; body: unknown; asResponse: true }) => Promise<Response>>;
  process.on("message", async (msg: { enrol?: string[]; serverTimes?: true }) => {
    if (msg.serverTimes) {
      const figures: Record<string, { p50: number | null; p99: number | null }> = {};
      for (const [route, ms] of timed) figures[route] = { p50: quantile(ms, 0.5), p99: quantile(ms, 0.99) };
      const gc = [...pauses].map(([kind, ms]) => `${kind} ×${ms.length} (${ms.reduce((a, b) => a + b, 0).toFixed(0)} ms in all, max ${Math.max(...ms).toFixed(1)} ms)`).join(", ");
      return void process.send!({ serverTimes: figures, gc });
    }
    if (!msg.enrol) return;
    let enrolled = 0;
    for (const wif of msg.enrol) {
      const key = PrivateKey.fromWif(wif);
      const body = JSON.stringify({ bapId: bapIdFromPubkey(key.toPublicKey().toString()), intent: "sign-up" });
      const proof = () => getAuthToken({ privateKeyWif: wif, requestPath: KEY_SIGN_UP, body });
      const headers = new Headers({ "content-type": "application/json", origin: url, "x-auth-token": proof(), "x-sigma-enrollment-proof": proof() });
      const request = new Request(url + KEY_SIGN_UP, { method: "POST", headers, body });
      const res = await api.signUpWithKey!({ request, headers, body: JSON.parse(body), asResponse: true });
      if (res.status === 200) enrolled++;
      else process.stderr.write(`soak: key enrolment answered ${res.status} ${(await res.text()).slice(0, 200)}\n`);
    }
    process.send!({ enrolled });
  });
  process.stdout.write(JSON.stringify({ ready: url, rateLimit: config.limits.enabled, redis: Boolean(config.redisUrl) }) + "\n");
  const stop = () =>
    void running.close().then(() => {
      rmSync(dir, { recursive: true, force: true });
      process.exit(0);
    });
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

// --- the result and its verdict (tests/ops/soak.test.ts) ------------------------------------

export interface RouteFigures {
  route: string;
  requests: number;
  /** How many of its requests succeeded in the measured phase (after warm-up): the latencies p50 and p99 are taken from. */
  measured: number;
  /** Over the measured phase (after warm-up); null when no request of it succeeded there. */
  p50: number | null;
  p99: number | null;
  errors: number;
  /** Why requests failed: status codes, "network", "timeout", "bad body", each with a count. */
  failures: Record<string, number>;
  /** The server's own time for the same requests (see serve), when it reported it. */
  server?: { p50: number | null; p99: number | null };
}

export interface RssSample {
  /** Seconds since traffic started. */
  at: number;
  bytes: number;
}

export interface SoakResult {
  seconds: number;
  rate: number;
  warmup: number;
  routes: RouteFigures[];
  rss: RssSample[];
}

/** The value at quantile `q` (0..1) of `values`, nearest rank; null for none. */
export function quantile(values: number[], q: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/** Fewer measured requests than this, and a nearest-rank p99 is the slowest of them. */
export const P99_SAMPLES = 100;

/**
 * The routes whose p99 rests on fewer than {@link P99_SAMPLES} requests, said plainly: their
 * p99 is their slowest single request (backup sync, sent every 4 s, always is in a short run).
 */
export function thinTails(routes: RouteFigures[]): string[] {
  return routes
    .filter((r) => r.measured > 0 && r.measured < P99_SAMPLES)
    .map((r) => `${r.route}: p99 of ${r.measured} measured request${r.measured === 1 ? "" : "s"} is the slowest of them (nearest rank; ${P99_SAMPLES} or more are needed for it to be anything else)`);
}

/**
 * RSS growth after warm-up: the median of the last five samples against the median of the
 * first five after warm-up (medians, so one sample taken just before a GC decides nothing).
 * Null when there are too few samples after warm-up to say.
 */
export function rssGrowth(samples: RssSample[], warmup: number): { baseline: number; end: number; growth: number } | null {
  const after = samples.filter((s) => s.at >= warmup).map((s) => s.bytes);
  if (after.length < 2) return null;
  const span = Math.min(5, Math.floor(after.length / 2));
  const baseline = quantile(after.slice(0, span), 0.5)!;
  const end = quantile(after.slice(-span), 0.5)!;
  return { baseline, end, growth: end / baseline - 1 };
}

/** Pass or fail, with every reason to fail. */
export function verdict(result: SoakResult): { ok: boolean; reasons: string[] } {
  const reasons: string[] = [];
  const total = result.routes.reduce((n, r) => n + r.requests, 0);
  if (total === 0) reasons.push("no request was sent");
  for (const r of result.routes) {
    if (r.errors > 0) reasons.push(`${r.route}: ${r.errors} failed (${Object.entries(r.failures).map(([why, n]) => `${why} ×${n}`).join(", ")}); ${r.requests} requests sent`);
  }
  const growth = rssGrowth(result.rss, result.warmup);
  if (!growth) reasons.push("too few RSS samples after warm-up to judge memory");
  else if (growth.growth >= MAX_RSS_GROWTH) reasons.push(`RSS grew ${(growth.growth * 100).toFixed(1)}% after warm-up (${mb(growth.baseline)} -> ${mb(growth.end)} MB; limit ${MAX_RSS_GROWTH * 100}%)`);
  return { ok: reasons.length === 0, reasons };
}

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

// --- client side ----------------------------------------------------------------------

/** The server's resident set size in bytes: /proc on Linux, `ps` elsewhere. */
function rssOf(pid: number): number | null {
  try {
    const kb = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    if (kb) return Number(kb) * 1024;
  } catch {
    /* not Linux */
  }
  try {
    return Number(execFileSync("ps", ["-o", "rss=", "-p", String(pid)], { encoding: "utf8" }).trim()) * 1024 || null;
  } catch {
    return null;
  }
}

function setting(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number (got ${raw})`);
  return value;
}

/** The database to run on: the one given, or a throwaway one created (and dropped by `drop`). */
async function database(): Promise<{ url: string; drop?: () => Promise<void> }> {
  const given = process.env.DATABASE_URL || process.env.TEST_DATABASE_URL;
  if (given) {
    if (!/^postgres(ql)?:\/\//.test(given)) throw new Error("the soak runs on PostgreSQL: set DATABASE_URL (or TEST_DATABASE_URL) to a postgres:// URL, or neither for a throwaway database on 127.0.0.1:5432");
    return { url: given };
  }
  const admin = "postgres://postgres@127.0.0.1:5432/postgres";
  const name = `idp_soak_${process.pid}_${Date.now().toString(36)}`;
  const run = async (statement: string) => {
    const client = new pg.Client({ connectionString: admin });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await run(`CREATE DATABASE ${name}`);
  return { url: `postgres://postgres@127.0.0.1:5432/${name}`, drop: () => run(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

type Operation = "userinfo" | "introspect" | "refresh" | "key-sign-in" | "authorize+token" | "backup-sync";
/** The repeating mix, one operation per tick. */
const MIX: Operation[] = ["userinfo", "introspect", "refresh", "key-sign-in", "userinfo", "introspect", "authorize+token", "refresh", "userinfo", "introspect"];
/**
 * Backup sync comes from one address here, and the spec limits it to 20 a minute per address:
 * it runs every 4 s beside the mix (15 a minute), whatever SOAK_RATE is.
 */
const SYNC_PERIOD_SECONDS = 4;
/** The routes reported, in order (an authorization code flow is two of them). */
const ROUTES = ["key-sign-in", "authorize", "consent", "token (code)", "refresh", "userinfo", "introspect", "backup-sync"];

function routeOf(path: string, form?: Record<string, string>): string {
  if (path.startsWith("/api/auth/oauth2/authorize")) return "authorize";
  if (path.startsWith("/api/auth/oauth2/consent")) return "consent";
  if (path.startsWith("/api/auth/oauth2/token")) return form?.grant_type === "refresh_token" ? "refresh" : "token (code)";
  if (path.startsWith("/api/auth/oauth2/userinfo")) return "userinfo";
  if (path.startsWith("/api/auth/oauth2/introspect")) return "introspect";
  if (path === KEY_SIGN_IN) return "key-sign-in";
  if (path === SYNC) return "backup-sync";
  return path;
}

class Recorder {
  private readonly latencies = new Map<string, number[]>();
  private readonly counts = new Map<string, { requests: number; failures: Record<string, number> }>();
  measuring = false;

  private entry(route: string) {
    let e = this.counts.get(route);
    if (!e) this.counts.set(route, (e = { requests: 0, failures: {} }));
    return e;
  }

  sent(route: string, ms: number) {
    this.entry(route).requests++;
    if (!this.measuring) return;
    const list = this.latencies.get(route) ?? [];
    list.push(ms);
    this.latencies.set(route, list);
  }

  failed(route: string, why: string) {
    const f = this.entry(route).failures;
    f[why] = (f[why] ?? 0) + 1;
  }

  figures(): RouteFigures[] {
    const names = [...ROUTES.filter((r) => this.counts.has(r)), ...[...this.counts.keys()].filter((r) => !ROUTES.includes(r))];
    return names.map((route) => {
      const { requests, failures } = this.counts.get(route)!;
      const ms = this.latencies.get(route) ?? [];
      return { route, requests, measured: ms.length, p50: round(quantile(ms, 0.5)), p99: round(quantile(ms, 0.99)), errors: Object.values(failures).reduce((a, b) => a + b, 0), failures };
    });
  }
}

/** A figure to a tenth of a millisecond. */
const round = (v: number | null) => (v === null ? null : Math.round(v * 10) / 10);

/** Sends the server child a message and waits for its reply, the first message that carries `field`. */
function ask<T>(child: ChildProcess, message: object, field: keyof T & string): Promise<T> {
  return new Promise<T>((ok) => {
    const onMessage = (m: Partial<T> | undefined) => {
      if (m?.[field] === undefined) return;
      child.off("message", onMessage);
      ok(m as T);
    };
    child.on("message", onMessage);
    child.send(message);
  });
}

/** A request failed as the operation saw it: its route and why. */
class Refused extends Error {
  constructor(
    readonly route: string,
    readonly why: string,
  ) {
    super(`${route}: ${why}`);
  }
}

async function main() {
  const seconds = setting("SOAK_SECONDS", 60);
  const rate = setting("SOAK_RATE", 20);
  const warmup = setting("SOAK_WARMUP", Math.min(10, Math.max(1, Math.round(seconds / 4))));
  const keyCount = Math.round(setting("SOAK_KEYS", 50));
  const asJson = arg("json") === "true";
  const say = (line: string) => process.stderr.write(`${line}\n`);

  const db = await database();
  const redisUrl = process.env.REDIS_URL || process.env.TEST_REDIS_URL || "";
  let child: ChildProcess | undefined;
  // Tokens are signed off the driver's event loop, so that signing never delays other answers.
  const signer = workerSigner();
  let result: SoakResult;
  let serverFacts: { rateLimit: boolean; redis: boolean };
  try {
    const spawned = await spawnServer(SELF, ["--serve"], { ...process.env, DATABASE_URL: db.url, REDIS_URL: redisUrl });
    child = spawned.child;
    const base = spawned.url;
    serverFacts = { rateLimit: spawned.ready.rateLimit === true, redis: spawned.ready.redis === true };
    say(`soak: ${base} on PostgreSQL${serverFacts.redis ? " + Redis" : ""}, rate limiter ${serverFacts.rateLimit ? "on (shipped default)" : "OFF (RATE_LIMIT_ENABLED=false in the environment)"}`);

    // Set-up: key accounts in the server process; the person, the client and the first chains over HTTP.
    const keys = Array.from({ length: keyCount }, () => {
      const key = PrivateKey.fromRandom();
      return { wif: key.toWif(), bapId: bapIdFromPubkey(key.toPublicKey().toString()) as string };
    });
    const { enrolled } = await ask<{ enrolled: number }>(child, { enrol: keys.map((k) => k.wif) }, "enrolled");
    if (enrolled !== keys.length) throw new Error(`soak set-up: ${enrolled} of ${keys.length} key accounts enrolled`);
    const chains = Math.max(4, Math.ceil(rate / 2));
    const fx = await setUp(base, chains, 1);
    say(`soak: set up ${keys.length} key accounts, ${chains} refresh chains; ${seconds}s at ${rate} operations/s, warm-up ${warmup}s`);

    const recorder = new Recorder();
    // Each refresh token with the credentials of the client it belongs to.
    const refreshPool = fx.refreshTokens.map((token) => ({ token, basic: fx.refreshBasic }));
    // Recent access tokens, each with its client's credentials: introspection answers active only to the issuing client.
    const accessTokens: { token: string; basic: string }[] = [{ token: fx.accessToken, basic: fx.basic }];
    const rememberAccess = (token: string, basic: string) => {
      accessTokens.push({ token, basic });
      if (accessTokens.length > 50) accessTokens.shift();
    };
    const someAccessToken = () => accessTokens[Math.floor(Math.random() * accessTokens.length)]!;
    let keyTurn = 0;
    const nextKey = () => keys[keyTurn++ % keys.length]!;

    /** A timed request; anything but the expected status and body is a Refused. */
    const send = async (b: string, path: string, init: Parameters<typeof call>[2] = {}): Promise<CallResult> => {
      const route = routeOf(path, init.form);
      const began = performance.now();
      let res: CallResult;
      try {
        const headers = recorder.measuring ? { ...init.headers, [SERVER_TIMED]: route } : init.headers;
        res = await call(b, path, { ...init, headers, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
      } catch (err) {
        recorder.sent(route, performance.now() - began);
        throw new Refused(route, (err as Error).name === "TimeoutError" ? "timeout" : "network");
      }
      recorder.sent(route, performance.now() - began);
      // authorize redirects, or answers the redirect as JSON `{url}` (better-auth, for a fetch).
      const expected = res.status === 200 || (route === "authorize" && res.status === 302);
      if (!expected) throw new Refused(route, String(res.status));
      return res;
    };
    const expectBody = (route: string, ok: boolean) => {
      if (!ok) throw new Refused(route, "bad body");
    };

    const operations: Record<Operation, () => Promise<void>> = {
      userinfo: async () => {
        const res = await send(base, "/api/auth/oauth2/userinfo", { backChannel: true, headers: { authorization: `Bearer ${someAccessToken().token}` } });
        expectBody("userinfo", typeof res.json?.sub === "string");
      },
      introspect: async () => {
        const { token, basic } = someAccessToken();
        const res = await send(base, "/api/auth/oauth2/introspect", { backChannel: true, headers: { authorization: basic }, form: { token, token_type_hint: "access_token" } });
        expectBody("introspect", res.json?.active === true);
      },
      refresh: async () => {
        const chain = refreshPool.shift();
        // Not a request: the server answers too slowly for the chains there are (a failure all the same).
        if (!chain) throw new Refused("refresh (not sent)", "every refresh chain in flight");
        let res: CallResult;
        try {
          res = await send(base, "/api/auth/oauth2/token", { backChannel: true, headers: { authorization: chain.basic }, form: { grant_type: "refresh_token", refresh_token: chain.token } });
        } catch (err) {
          // Refused before the grant ran (a 429, a 503): the token is still good.
          if (err instanceof Refused && /^(429|503)$/.test(err.why)) refreshPool.push(chain);
          throw err;
        }
        expectBody("refresh", typeof res.json?.refresh_token === "string" && typeof res.json?.access_token === "string");
        refreshPool.push({ token: res.json.refresh_token, basic: chain.basic });
        rememberAccess(res.json.access_token, chain.basic);
      },
      "key-sign-in": async () => {
        const key = nextKey();
        const body = JSON.stringify({ bapId: key.bapId });
        const token = await signer.sign(key.wif, KEY_SIGN_IN, body);
        const res = await send(base, KEY_SIGN_IN, { body: JSON.parse(body), headers: { "x-auth-token": token } });
        expectBody("key-sign-in", typeof res.json?.token === "string");
      },
      "authorize+token": async () => {
        let last = "authorize";
        const tracked = (b: string, path: string, init?: Parameters<typeof call>[2]) => {
          last = routeOf(path, init?.form);
          return send(b, path, init);
        };
        try {
          const tokens = await authorizationCodeFlow(base, fx.cookie, { clientId: fx.clientId, basic: fx.basic }, tracked);
          refreshPool.push({ token: tokens.refresh_token, basic: fx.basic });
          rememberAccess(tokens.access_token, fx.basic);
        } catch (err) {
          throw err instanceof Refused ? err : new Refused(last, "bad body");
        }
      },
      "backup-sync": async () => {
        const key = nextKey();
        const body = JSON.stringify({ bapId: key.bapId, encryptedBackup: randomBytes(96).toString("base64") });
        const token = await signer.sign(key.wif, SYNC, body);
        const res = await send(base, SYNC, { body: JSON.parse(body), headers: { authorization: `Bitcoin-Auth ${token}` } });
        expectBody("backup-sync", res.json?.success === true);
      },
    };

    // Traffic, open loop, with the RSS sampled every second.
    const rss: RssSample[] = [];
    const began = performance.now();
    const elapsed = () => (performance.now() - began) / 1000;
    const sampler = setInterval(() => {
      const bytes = rssOf(child!.pid!);
      if (bytes) rss.push({ at: Math.round(elapsed() * 10) / 10, bytes });
    }, 1000);
    const loopDelay = monitorEventLoopDelay({ resolution: 1 });
    loopDelay.enable();
    const inFlight = new Set<Promise<void>>();
    const total = Math.round(seconds * rate);
    const syncEvery = Math.max(1, Math.round(rate * SYNC_PERIOD_SECONDS));
    for (let i = 0; i < total; i++) {
      const due = (i * 1000) / rate;
      const wait = due - (performance.now() - began);
      if (wait > 0) await new Promise((ok) => setTimeout(ok, wait));
      recorder.measuring = elapsed() >= warmup;
      const dueOps: Operation[] = [MIX[i % MIX.length]!];
      if (i % syncEvery === 0) dueOps.push("backup-sync");
      for (const op of dueOps) {
        const run = operations[op]().catch((err) => {
          if (err instanceof Refused) recorder.failed(err.route, err.why);
          else recorder.failed("load generator", (err as Error).message.slice(0, 80));
        });
        inFlight.add(run);
        void run.finally(() => inFlight.delete(run));
      }
    }
    await Promise.all(inFlight);
    clearInterval(sampler);
    loopDelay.disable();
    say(`soak: the driver's own event-loop delay p50 ${(loopDelay.percentile(50) / 1e6).toFixed(1)} ms, p99 ${(loopDelay.percentile(99) / 1e6).toFixed(1)} ms, max ${(loopDelay.max / 1e6).toFixed(1)} ms`);
    const last = rssOf(child.pid!);
    if (last) rss.push({ at: Math.round(elapsed() * 10) / 10, bytes: last });
    type ServerTimes = { serverTimes: Record<string, { p50: number | null; p99: number | null }>; gc: string };
    const { serverTimes, gc } = await ask<ServerTimes>(child, { serverTimes: true }, "serverTimes");
    const routes = recorder.figures().map((r) => (serverTimes[r.route] ? { ...r, server: { p50: round(serverTimes[r.route]!.p50), p99: round(serverTimes[r.route]!.p99) } } : r));
    say(`soak: the server's garbage collection while measured: ${gc || "none"}`);
    result = { seconds, rate, warmup, routes, rss };
  } finally {
    await signer.close();
    if (child && child.exitCode === null) {
      child.kill("SIGTERM");
      await new Promise((ok) => child!.once("exit", ok));
    }
    await db.drop?.().catch((err) => say(`soak: could not drop the throwaway database: ${(err as Error).message}`));
  }

  const judged = verdict(result);
  const growth = rssGrowth(result.rss, result.warmup);
  if (asJson) {
    process.stdout.write(JSON.stringify({ ...result, server: serverFacts, rssGrowth: growth, ok: judged.ok, reasons: judged.reasons }, null, 2) + "\n");
  } else {
    const header = ["route", "requests", "measured", "p50 ms", "p99 ms", "server p50", "server p99", "errors"];
    const lines = result.routes.map((r) => [r.route, String(r.requests), String(r.measured), String(r.p50 ?? "-"), String(r.p99 ?? "-"), String(r.server?.p50 ?? "-"), String(r.server?.p99 ?? "-"), r.errors ? `${r.errors} (${Object.entries(r.failures).map(([why, n]) => `${why} ×${n}`).join(", ")})` : "0"]);
    const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
    const fmt = (cells: string[]) => cells.map((c, i) => (i === 0 || i === header.length - 1 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
    const samples = result.rss.map((s) => mb(s.bytes)).join(" ");
    process.stdout.write(
      [
        "",
        `soak: ${result.seconds}s at ${result.rate} operations/s, one instance, PostgreSQL${serverFacts.redis ? " + Redis" : ""}, rate limiter ${serverFacts.rateLimit ? "on" : "OFF"}; latencies after ${result.warmup}s warm-up`,
        fmt(header),
        ...lines.map(fmt),
        ...thinTails(result.routes).map((line) => `note: ${line}`),
        `RSS MB every second: ${samples}`,
        growth ? `RSS after warm-up: ${mb(growth.baseline)} -> ${mb(growth.end)} MB (${growth.growth >= 0 ? "+" : ""}${(growth.growth * 100).toFixed(1)}%, limit +${MAX_RSS_GROWTH * 100}%)` : "RSS after warm-up: too few samples",
        judged.ok ? "PASS" : `FAIL\n${judged.reasons.map((r) => `  - ${r}`).join("\n")}`,
        "",
      ].join("\n"),
    );
  }
  if (!judged.ok) process.exitCode = 1;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (arg("serve")) await serve(Number(arg("port")));
  else await main();
}
