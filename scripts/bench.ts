/**
 * `npm run bench`: throughput and tail latency of the hot routes, on this machine.
 *
 * Starts the real server (server.ts `start`) in a child process on a temporary SQLite
 * database, so the load generator and the server do not share an event loop; signs up
 * a user, registers a confidential client (client_secret_basic), runs authorization
 * code flows for access and refresh tokens, then runs bounded autocannon runs against:
 * discovery, JWKS, get-session (cookie), userinfo (bearer), introspection
 * (client_secret_basic) and the refresh grant (each refresh token is used exactly once:
 * a pool holds one token per in-flight chain, and every response's rotated token goes
 * back in the pool for that chain's next request).
 *
 * A figure counts only when every request of its run succeeded: non-2xx answers,
 * socket errors, timeouts and bodies that fail the route's check are reported, and any
 * of them marks the row invalid (the script then exits 1).
 *
 * Options: --duration=SECONDS (per route, default 8), --warmup=SECONDS (default 2),
 * --rounds=N (default 1: each round measures every route once, in turn; the table shows
 * the median and the range, which on a shared machine says more than one run),
 * --connections=N (default 10), --only=name[,name] (discovery, jwks, get-session,
 * userinfo, introspect, refresh), --json (machine-readable result on stdout),
 * --cpu-prof=DIR (a V8 CPU profile of the server per measured run, DIR/<route>.cpuprofile).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { parseJsonOrNull } from "../lib/json.js";

const SELF = fileURLToPath(import.meta.url);
/** The V8 flags `npm start` runs the server with (package.json "start"); --server-node-flags overrides. */
const SERVER_NODE_FLAGS = "--max-semi-space-size=32";
const REDIRECT = "https://client.example/callback";

function arg(name: string): string | undefined {
  const hit = process.argv.find((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  if (!hit) return undefined;
  return hit.includes("=") ? hit.slice(hit.indexOf("=") + 1) : "true";
}

// --- server side (child process) -------------------------------------------------------

async function serve(dir: string, port: number) {
  const { loadEnv } = await import("../lib/env.js");
  const { start } = await import("../server.js");
  const url = `http://127.0.0.1:${port}`;
  const config = loadEnv({
    NODE_ENV: "development",
    PORT: String(port),
    HOST: "127.0.0.1",
    AUTH_URL: url,
    DATA_DIR: dir,
    DATABASE_URL: join(dir, "bench.sqlite"),
    BETTER_AUTH_SECRET: randomBytes(32).toString("base64url"),
    LOG_LEVEL: "error",
    AUTO_MIGRATE: "true",
  });
  const running = await start(config);
  process.stdout.write(JSON.stringify({ ready: url }) + "\n");
  const stop = () => void running.close().then(() => process.exit(0));
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  if (arg("profiling") !== "true") return;
  // --cpu-prof: the parent asks for a V8 CPU profile around each measured run only.
  const { Session } = await import("node:inspector/promises");
  const { writeFileSync } = await import("node:fs");
  const session = new Session();
  session.connect();
  process.on("message", async (msg: { profile: "start" | "stop"; file?: string }) => {
    if (msg.profile === "start") {
      await session.post("Profiler.enable");
      await session.post("Profiler.setSamplingInterval", { interval: 200 });
      await session.post("Profiler.start");
    } else {
      const { profile } = await session.post("Profiler.stop");
      writeFileSync(msg.file!, JSON.stringify(profile));
    }
    process.send!({ profiled: msg.profile });
  });
}

// --- client side ----------------------------------------------------------------------

async function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const srv = createServer();
    srv.once("error", fail);
    srv.listen(0, "127.0.0.1", () => {
      const address = srv.address();
      const port = typeof address === "object" && address ? address.port : 0;
      srv.close(() => ok(port));
    });
  });
}

/**
 * Starts `script` in a child process that serves on a free port (`--port=N` is appended to
 * `args`) and prints `{"ready": url, ...}` on its stdout once it does; answers that URL and
 * the whole line.
 */
async function spawnServer(script: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ url: string; child: ChildProcess; ready: Record<string, unknown> }> {
  const port = await freePort();
  const flags = (arg("server-node-flags") ?? SERVER_NODE_FLAGS).split(" ").filter(Boolean);
  const child = spawn(process.execPath, [...flags, "--import", "tsx", script, ...args, `--port=${port}`], {
    // Dependencies see a production process (better-auth, hono, kysely branch on it);
    // our own configuration is the explicit record the child builds.
    env: { ...env, NODE_ENV: "production" },
    stdio: ["ignore", "pipe", "inherit", "ipc"],
  });
  const ready = await new Promise<Record<string, unknown>>((ok, fail) => {
    let buffered = "";
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString();
      const line = buffered.split("\n").find((l) => l.startsWith("{"));
      if (line) {
        child.stdout!.off("data", onData);
        ok(JSON.parse(line));
      }
    };
    child.stdout!.on("data", onData);
    child.once("exit", (code) => fail(new Error(`server exited during start-up (${code})`)));
  });
  child.stdout!.resume();
  return { url: String(ready.ready), child, ready };
}

function cookiesOf(headers: Headers): string {
  return headers
    .getSetCookie()
    .map((c) => c.split(";")[0]!)
    .filter((c) => !c.endsWith("="))
    .join("; ");
}

type CallInit = { method?: string; body?: unknown; form?: Record<string, string>; cookie?: string; headers?: Record<string, string>; signal?: AbortSignal };
type CallResult = Awaited<ReturnType<typeof call>>;

async function call(base: string, path: string, init: CallInit = {}) {
  const headers: Record<string, string> = { origin: base, ...init.headers };
  if (init.cookie) headers.cookie = init.cookie;
  let body: string | undefined;
  if (init.form) {
    headers["content-type"] = "application/x-www-form-urlencoded";
    body = new URLSearchParams(init.form).toString();
  } else if (init.body !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(init.body);
  }
  const res = await fetch(base + path, { method: init.method ?? (body ? "POST" : "GET"), headers, body, redirect: "manual", signal: init.signal });
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: parseJsonOrNull(text) as any, text };
}

function must(cond: unknown, what: string, res?: { status: number; text: string }): asserts cond {
  if (!cond) throw new Error(`bench setup: ${what}${res ? ` (${res.status} ${res.text.slice(0, 300)})` : ""}`);
}

interface Fixture {
  cookie: string;
  /** The client that introspects (its id; `basic` is its credentials). */
  clientId: string;
  /** The client that introspects and whose access token userinfo reads. */
  basic: string;
  accessToken: string;
  /** Refresh chains for one round of the refresh scenario, and the client they belong to. */
  refreshBasic: string;
  refreshTokens: string[];
  /**
   * New chains under a newly registered client, for the next round. A refresh run ends
   * with requests cut off mid-flight (rotated on the server, the answer never read), and
   * the fixture's own access token must not share a family (client + user) with chains
   * that rotation or reuse detection may revoke.
   */
  newChains(count: number): Promise<{ basic: string; tokens: string[] }>;
}

/**
 * One authorization code flow (PKCE S256, confidential client) for the signed-in `cookie`:
 * authorize, consent when asked, code exchange. `send` makes each request (scripts/soak.ts
 * times them); a step that does not answer as expected throws.
 */
async function authorizationCodeFlow(base: string, cookie: string, { clientId, basic }: { clientId: string; basic: string }, send: (base: string, path: string, init?: CallInit) => Promise<CallResult> = call) {
  const verifier = randomBytes(32).toString("base64url");
  const challenge = createHash("sha256").update(verifier).digest("base64url");
  const params = new URLSearchParams({
    response_type: "code",
    client_id: clientId,
    redirect_uri: REDIRECT,
    scope: "openid profile email offline_access",
    state: randomBytes(8).toString("hex"),
    nonce: randomBytes(8).toString("hex"),
    code_challenge: challenge,
    code_challenge_method: "S256",
  });
  let res = await send(base, `/api/auth/oauth2/authorize?${params}`, { cookie });
  const next = (r: typeof res) => (r.status >= 300 && r.status < 400 ? r.headers.get("location") : (r.json?.url ?? r.json?.redirect_uri ?? null));
  let location: string | null = next(res);
  if (location?.startsWith("/consent")) {
    res = await send(base, "/api/auth/oauth2/consent", { cookie, body: { accept: true, oauth_query: new URL(location, base).search.slice(1) } });
    location = next(res);
  }
  must(location, "authorize redirect", res);
  const code = new URL(location, base).searchParams.get("code");
  must(code, `authorization code in ${location}`);
  const tok = await send(base, "/api/auth/oauth2/token", {
    headers: { authorization: basic },
    form: { grant_type: "authorization_code", code, redirect_uri: REDIRECT, code_verifier: verifier },
  });
  must(tok.status === 200 && tok.json?.access_token && tok.json?.refresh_token, "code exchange", tok);
  return tok.json as { access_token: string; refresh_token: string };
}

async function setUp(base: string, refreshChains: number): Promise<Fixture> {
  const email = `bench-${Date.now().toString(36)}@example.com`;
  const signUp = await call(base, "/api/auth/sign-up/email", { body: { name: "Bench Person", email, password: "correct horse battery staple" } });
  must(signUp.status === 200, "sign-up", signUp);
  const cookie = cookiesOf(signUp.headers);

  const register = async () => {
    // Registered without the session: a signed-in person's clients count against their tier's
    // limit (free: one), and a refresh run registers a new client per round.
    const reg = await call(base, "/api/auth/oauth2/register", {
      body: {
        client_name: "Bench App",
        redirect_uris: [REDIRECT],
        token_endpoint_auth_method: "client_secret_basic",
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
      },
    });
    must(reg.status === 201 && reg.json?.client_secret, "client registration", reg);
    const clientId: string = reg.json.client_id;
    return { clientId, basic: "Basic " + Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(reg.json.client_secret)}`).toString("base64") };
  };

  const codeFlow = (client: { clientId: string; basic: string }) => authorizationCodeFlow(base, cookie, client);

  const newChains = async (count: number) => {
    const client = await register();
    const tokens: string[] = [];
    while (tokens.length < count) tokens.push((await codeFlow(client)).refresh_token);
    return { basic: client.basic, tokens };
  };
  const main = await register();
  const first = await codeFlow(main);
  const chains = await newChains(refreshChains);
  return { cookie, clientId: main.clientId, basic: main.basic, accessToken: first.access_token, refreshBasic: chains.basic, refreshTokens: chains.tokens, newChains };
}

/** The speed goals of issue 2 (req/s on this 2-core machine, SQLite, load generator on the box). */
const GOALS: Record<string, number> = { discovery: 5000, jwks: 5000, "get-session": 2000, introspect: 1000, refresh: 500 };

interface Scenario {
  name: string;
  path: string;
  options: Partial<autocannon.Options>;
  /** Checks a 2xx body; a false counts as a failure of the run. */
  verify?: (body: string) => boolean;
}

function scenarios(fx: Fixture): Scenario[] {
  const form = (o: Record<string, string>) => new URLSearchParams(o).toString();
  // The refresh pool: a token leaves the pool when a request is built with it, and the
  // token that request is answered with goes back in. Tokens are never sent twice.
  const pool = [...fx.refreshTokens];
  return [
    {
      name: "discovery",
      path: "/.well-known/openid-configuration",
      options: { method: "GET" },
      verify: (b) => b.includes('"issuer"'),
    },
    { name: "jwks", path: "/api/auth/jwks", options: { method: "GET" }, verify: (b) => b.includes('"keys"') },
    {
      name: "get-session",
      path: "/api/auth/get-session",
      options: { method: "GET", headers: { cookie: fx.cookie } },
      verify: (b) => b.includes('"session"') && b.includes('"user"'),
    },
    {
      name: "userinfo",
      path: "/api/auth/oauth2/userinfo",
      options: { method: "GET", headers: { authorization: `Bearer ${fx.accessToken}` } },
      verify: (b) => b.includes('"sub"'),
    },
    {
      name: "introspect",
      path: "/api/auth/oauth2/introspect",
      options: {
        method: "POST",
        headers: { authorization: fx.basic, "content-type": "application/x-www-form-urlencoded" },
        body: form({ token: fx.accessToken, token_type_hint: "access_token" }),
      },
      verify: (b) => b.includes('"active":true'),
    },
    {
      name: "refresh",
      path: "/api/auth/oauth2/token",
      options: {
        requests: [
          {
            method: "POST",
            path: "/api/auth/oauth2/token",
            headers: { authorization: fx.refreshBasic, "content-type": "application/x-www-form-urlencoded" },
            setupRequest: (req: any) => {
              // An empty pool (chains lost to failures) sends a bogus token: a 4xx, so the row is invalid.
              const token = pool.shift() ?? "pool-ran-dry";
              return { ...req, body: form({ grant_type: "refresh_token", refresh_token: token }) };
            },
            onResponse: (status: number, body: string) => {
              if (status !== 200) return;
              try {
                const next = JSON.parse(body).refresh_token;
                if (typeof next === "string") pool.push(next);
              } catch {
                /* counted by verify */
              }
            },
          },
        ],
      },
      verify: (b) => b.includes('"access_token"') && b.includes('"refresh_token"'),
    },
  ];
}

interface Row {
  route: string;
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  mismatches: number;
  /** Server CPU per request: a figure that other load on the machine disturbs less than req/s. */
  cpuMsPerReq: number | undefined;
  valid: boolean;
}

/** CPU time (user + system) the server process has used, in ms; from /proc, so Linux only. */
function serverCpuMs(pid: number | undefined): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in USER_HZ (100)
  } catch {
    return undefined;
  }
}

/** The first body that failed each route's check, shown to explain an invalid row. */
const firstBad = new Map<string, string>();

async function run(base: string, s: Scenario, seconds: number, connections: number): Promise<autocannon.Result> {
  return autocannon({
    url: base + s.path,
    connections,
    pipelining: 1,
    duration: seconds,
    timeout: 10,
    ...s.options,
    ...(s.verify
      ? {
          verifyBody: (body: string) => {
            const ok = s.verify!(body);
            if (!ok && !firstBad.has(s.name)) firstBad.set(s.name, body.slice(0, 300));
            return ok;
          },
        }
      : {}),
  } as autocannon.Options);
}

async function main() {
  const seconds = Number(arg("duration") ?? 8);
  const warmup = Number(arg("warmup") ?? 2);
  const connections = Number(arg("connections") ?? 10);
  const rounds = Math.max(1, Number(arg("rounds") ?? 1));
  const only = arg("only")?.split(",");
  const asJson = arg("json") === "true";
  const dir = mkdtempSync(join(tmpdir(), "idp-bench-"));
  const profileDir = arg("cpu-prof");
  const { url, child } = await spawnServer(SELF, [`--serve=${dir}`, ...(profileDir ? ["--profiling"] : [])]);
  if (profileDir) mkdirSync(profileDir, { recursive: true });
  const profile = (what: "start" | "stop", file?: string) =>
    new Promise<void>((ok) => {
      const onMessage = (m: any) => {
        if (m?.profiled !== what) return;
        child.off("message", onMessage);
        ok();
      };
      child.on("message", onMessage);
      child.send({ profile: what, file });
    });
  const rows: Row[] = [];
  try {
    // A run can end with one token per connection built or in flight and never answered
    // (lost to the pool): four per connection cover the warm-up and the measured run.
    const fx = await setUp(url, connections * 4);
    for (let round = 0; round < rounds; round++) {
      if (round > 0 && (!only || only.includes("refresh"))) {
        const next = await fx.newChains(connections * 4);
        fx.refreshBasic = next.basic;
        fx.refreshTokens = next.tokens;
      }
      for (const s of scenarios(fx)) {
        if (only && !only.includes(s.name)) continue;
        if (warmup > 0) await run(url, s, warmup, connections);
        if (profileDir) await profile("start");
        const cpuBefore = serverCpuMs(child.pid);
        const r = await run(url, s, seconds, connections);
        const cpuAfter = serverCpuMs(child.pid);
        if (profileDir) await profile("stop", resolve(profileDir, rounds > 1 ? `${s.name}.${round + 1}.cpuprofile` : `${s.name}.cpuprofile`));
        const mismatches = r.mismatches ?? 0;
        const row: Row = {
          route: s.name,
          rps: Math.round(r.requests.average),
          p50: r.latency.p50,
          p99: r.latency.p99,
          requests: r.requests.total,
          non2xx: r.non2xx,
          errors: r.errors,
          timeouts: r.timeouts,
          mismatches,
          cpuMsPerReq: cpuBefore !== undefined && cpuAfter !== undefined && r.requests.total ? (cpuAfter - cpuBefore) / r.requests.total : undefined,
          valid: r.non2xx === 0 && r.errors === 0 && r.timeouts === 0 && mismatches === 0 && r.requests.total > 0,
        };
        rows.push(row);
        if (!asJson) process.stderr.write(`  ${s.name}: ${row.rps} req/s\n`);
        if (!row.valid) {
          const codes = Object.entries(r.statusCodeStats ?? {}).map(([code, v]) => `${code}x${v.count}`).join(" ");
          process.stderr.write(`  ${s.name}: INVALID run; status codes ${codes}; first bad body: ${firstBad.get(s.name) ?? "-"}\n`);
        }
      }
    }
  } finally {
    child.kill("SIGTERM");
    await new Promise((ok) => child.once("exit", ok));
    rmSync(dir, { recursive: true, force: true });
  }

  const summary = summarize(rows);
  if (asJson) {
    process.stdout.write(JSON.stringify({ seconds, connections, rounds, summary, rows }, null, 2) + "\n");
  } else {
    const header = ["route", "req/s", "range", "goal", "p50 ms", "p99 ms", "requests", "non-2xx", "errors", "timeouts", "bad body", "server CPU ms/req", "valid"];
    const lines = summary.map((r) =>
      [
        r.route,
        r.rps,
        r.min === r.max ? "-" : `${r.min}-${r.max}`,
        r.goal === undefined ? "-" : `${r.goal} ${r.rps >= r.goal ? "met" : "MISSED"}`,
        r.p50,
        r.p99,
        r.requests,
        r.non2xx,
        r.errors,
        r.timeouts,
        r.mismatches,
        r.cpuMsPerReq?.toFixed(3) ?? "n/a",
        r.valid ? "yes" : "NO",
      ].map(String),
    );
    const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
    const fmt = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
    const what = rounds > 1 ? `median of ${rounds} rounds, ` : "";
    process.stdout.write(`\n${what}${seconds}s per route, ${connections} connections, loopback, SQLite\n${fmt(header)}\n${lines.map(fmt).join("\n")}\n`);
  }
  if (rows.some((r) => !r.valid)) process.exitCode = 1;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** One line per route over its rounds: medians of the rates, sums of the counts. */
function summarize(rows: Row[]) {
  const routes = [...new Set(rows.map((r) => r.route))];
  return routes.map((route) => {
    const mine = rows.filter((r) => r.route === route);
    const cpu = mine.map((r) => r.cpuMsPerReq).filter((v): v is number => v !== undefined);
    return {
      route,
      rps: Math.round(median(mine.map((r) => r.rps))),
      min: Math.min(...mine.map((r) => r.rps)),
      max: Math.max(...mine.map((r) => r.rps)),
      goal: GOALS[route],
      p50: median(mine.map((r) => r.p50)),
      p99: median(mine.map((r) => r.p99)),
      requests: mine.reduce((n, r) => n + r.requests, 0),
      non2xx: mine.reduce((n, r) => n + r.non2xx, 0),
      errors: mine.reduce((n, r) => n + r.errors, 0),
      timeouts: mine.reduce((n, r) => n + r.timeouts, 0),
      mismatches: mine.reduce((n, r) => n + r.mismatches, 0),
      cpuMsPerReq: cpu.length ? median(cpu) : undefined,
      valid: mine.every((r) => r.valid),
    };
  });
}

export { setUp, call, authorizationCodeFlow, spawnServer, summarize, type CallResult, type Fixture };

if (import.meta.url === `file://${process.argv[1]}`) {
  const serveDir = arg("serve");
  if (serveDir) await serve(serveDir, Number(arg("port")));
  else await main();
}
