/**
 * `npm run bench`: throughput and tail latency of the hot routes, on this machine.
 *
 * Starts the real server (server.ts `start`) in a child process with the shipped defaults,
 * rate limits on, on a temporary SQLite database (or, with --db=postgres, a throwaway
 * PostgreSQL database on 127.0.0.1:5432 and Redis 127.0.0.1:6379 database 12, emptied first),
 * so the load generator and the server do not share an event loop; signs up a user, registers
 * a confidential client (client_secret_basic), runs authorization code flows for access and
 * refresh tokens, then runs bounded autocannon runs against: discovery, JWKS, get-session
 * (cookie), userinfo (bearer), introspection (client_secret_basic) and the refresh grant (each
 * refresh token is used exactly once: a pool holds one token per in-flight chain, and every
 * response's rotated token goes back in the pool for that chain's next request).
 * Introspection is spread over eight clients, each asking about its own token: the shipped
 * `client` limit (5,000 a second per client) refuses one client going faster, as it should.
 *
 * --reference also starts node-oidc-provider (scripts/bench/reference.ts) in a child process
 * of its own and measures its discovery, JWKS, introspection and refresh grant in the same
 * rounds, route by route beside ours (the order alternating by round); the ratio of each
 * route is the median over rounds of ours / theirs in that round, get-session's is against
 * our own discovery.
 *
 * A figure counts only when every request of its run succeeded: non-2xx answers,
 * socket errors, timeouts and bodies that fail the route's check are reported, and any
 * of them marks the row invalid (the script then exits 1).
 *
 * Options: --duration=SECONDS (per route, default 8), --warmup=SECONDS (default 2),
 * --rounds=N (default 1), --connections=N (default 10; 16 with --reference, as the issue's
 * comparison), --only=name[,name] (discovery, jwks, get-session, userinfo, introspect,
 * refresh), --reference, --db=postgres, --json (machine-readable result on stdout),
 * --cpu-prof=DIR (a V8 CPU profile of our server per measured run, DIR/<route>.cpuprofile).
 */
import type { ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { arg } from "./bench/args.js";
import { setUp, type Fixture } from "./bench/fixture.js";
import { throwawayPostgres } from "./bench/postgres.js";
import { processCpuMs, profilerOf, spawnServer, stopServer } from "./bench/process.js";
import { REFERENCE_PATHS } from "./bench/reference.js";
import { ratios, summarize, table, type Row } from "./bench/report.js";
import { REFERENCE_ROUTES, ROUTES, scenarios, type Scenario, type Target } from "./bench/scenarios.js";

const SELF = fileURLToPath(import.meta.url);

const OUR_PATHS: Target["paths"] = {
  discovery: "/.well-known/openid-configuration",
  jwks: "/api/auth/jwks",
  introspect: "/api/auth/oauth2/introspect",
  token: "/api/auth/oauth2/token",
  getSession: "/api/auth/get-session",
  userinfo: "/api/auth/oauth2/userinfo",
};

/** The first body that failed each route's check, shown to explain an invalid row. */
const firstBad = new Map<string, string>();

async function run(base: string, s: Scenario, seconds: number, connections: number, label: string): Promise<autocannon.Result> {
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
            if (!ok && !firstBad.has(label)) firstBad.set(label, body.slice(0, 300));
            return ok;
          },
        }
      : {}),
  } as autocannon.Options);
}

/** One server under test: its child process, and how to get the next round's refresh chains. */
interface Server {
  name: "ours" | "reference";
  url: string;
  child: ChildProcess;
  target: Target;
  newChains(count: number): Promise<{ basic: string; tokens: string[] }>;
}

function oursOf(url: string, child: ChildProcess, fx: Fixture): Server {
  const target: Target = {
    paths: OUR_PATHS,
    basic: fx.basic,
    accessToken: fx.accessToken,
    introspectors: fx.introspectors,
    cookie: fx.cookie,
    cookies: fx.cookies,
    refreshBasic: fx.refreshBasic,
    refreshTokens: fx.refreshTokens,
  };
  return { name: "ours", url, child, target, newChains: fx.newChains };
}

async function referenceOf(url: string, child: ChildProcess, ready: Record<string, unknown>, chains: number): Promise<Server> {
  const basic = "Basic " + Buffer.from(`${encodeURIComponent(String(ready.clientId))}:${encodeURIComponent(String(ready.clientSecret))}`).toString("base64");
  const mint = async (count: number) => {
    const res = await fetch(`${url}/__bench/mint?refresh=${count}`, { method: "POST" });
    if (!res.ok) throw new Error(`reference: minting tokens answered ${res.status}`);
    return (await res.json()) as { accessToken: string; refreshTokens: string[] };
  };
  const first = await mint(chains);
  const target: Target = {
    paths: { discovery: REFERENCE_PATHS.discovery, jwks: REFERENCE_PATHS.jwks, introspect: REFERENCE_PATHS.introspect, token: REFERENCE_PATHS.token },
    basic,
    accessToken: first.accessToken,
    refreshBasic: basic,
    refreshTokens: first.refreshTokens,
  };
  return { name: "reference", url, child, target, newChains: async (count) => ({ basic, tokens: (await mint(count)).refreshTokens }) };
}

async function main() {
  const seconds = Number(arg("duration") ?? 8);
  const warmup = Number(arg("warmup") ?? 2);
  const withReference = arg("reference") === "true";
  const connections = Number(arg("connections") ?? (withReference ? 16 : 10));
  const rounds = Math.max(1, Number(arg("rounds") ?? 1));
  const only = arg("only")?.split(",");
  const asJson = arg("json") === "true";
  const db = arg("db") === "postgres" ? "postgres" : "sqlite";
  const dir = mkdtempSync(join(tmpdir(), "idp-bench-"));
  const profileDir = arg("cpu-prof");
  const pgRun = db === "postgres" ? await throwawayPostgres() : null;
  const say = (line: string) => !asJson && process.stderr.write(line + "\n");
  const servers: Server[] = [];
  const rows: Row[] = [];
  let limitsOn = false;
  try {
    const pgArgs = pgRun ? [`--database-url=${pgRun.databaseUrl}`, `--redis-url=${pgRun.redisUrl}`] : [];
    // --slow-introspect-ms: the speed guard's self-test (scripts/bench/guard.ts).
    const slow = arg("slow-introspect-ms") ? [`--slow-introspect-ms=${arg("slow-introspect-ms")}`] : [];
    const ours = await spawnServer(SELF, [`--serve=${dir}`, ...pgArgs, ...slow, ...(profileDir ? ["--profiling"] : [])]);
    limitsOn = ours.ready.limits === true;
    // A run can end with one token per connection built or in flight and never answered
    // (lost to the pool): four per connection cover the warm-up and the measured run.
    const chains = connections * 4;
    servers.push(oursOf(ours.url, ours.child, await setUp(ours.url, chains)));
    if (withReference) {
      const ref = await spawnServer(SELF, ["--serve-reference"]);
      servers.push(await referenceOf(ref.url, ref.child, ref.ready, chains));
    }
    say(`our server: ${db === "postgres" ? "PostgreSQL + Redis" : "SQLite"}, shipped rate limits ${limitsOn ? "ON" : "OFF"}; introspection from ${servers[0]!.target.introspectors?.length ?? 1} clients and get-session from ${servers[0]!.target.cookies?.length ?? 1} sessions in turn (one client or session past 5,000/s meets its shipped limit)`);
    if (profileDir) mkdirSync(profileDir, { recursive: true });
    const profile = profileDir ? profilerOf(ours.child) : null;
    for (let round = 0; round < rounds; round++) {
      if (round > 0 && (!only || only.includes("refresh"))) {
        for (const s of servers) {
          const next = await s.newChains(chains);
          s.target.refreshBasic = next.basic;
          s.target.refreshTokens = next.tokens;
        }
      }
      const byServer = new Map(servers.map((s) => [s, scenarios(s.target)]));
      // Route by route, both servers back to back; who goes first alternates by round.
      const order = round % 2 ? [...servers].reverse() : servers;
      for (const route of ROUTES) {
        if (only && !only.includes(route)) continue;
        for (const server of order) {
          if (server.name === "reference" && !REFERENCE_ROUTES.includes(route)) continue;
          const s = byServer.get(server)!.find((x) => x.name === route);
          if (!s) continue;
          const label = `${server.name} ${route}`;
          if (warmup > 0) await run(server.url, s, warmup, connections, label);
          const profiled = profile && server.name === "ours";
          if (profiled) await profile("start");
          const cpuBefore = processCpuMs(server.child.pid);
          const r = await run(server.url, s, seconds, connections, label);
          const cpuAfter = processCpuMs(server.child.pid);
          if (profiled) await profile("stop", resolve(profileDir!, rounds > 1 ? `${route}.${round + 1}.cpuprofile` : `${route}.cpuprofile`));
          const mismatches = r.mismatches ?? 0;
          const row: Row = {
            route,
            server: server.name,
            round,
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
          say(`  ${label}: ${row.rps} req/s`);
          if (!row.valid) {
            const codes = Object.entries(r.statusCodeStats ?? {}).map(([code, v]) => `${code}x${v.count}`).join(" ");
            say(`  ${label}: INVALID run; status codes ${codes}; first bad body: ${firstBad.get(label) ?? "-"}`);
          }
        }
      }
    }
  } finally {
    for (const s of servers) await stopServer(s.child);
    rmSync(dir, { recursive: true, force: true });
    await pgRun?.drop();
  }

  const summary = summarize(rows.filter((r) => r.server === "ours"));
  const reference = summarize(rows.filter((r) => r.server === "reference"));
  const ratioRows = withReference ? ratios(rows) : [];
  if (asJson) {
    process.stdout.write(JSON.stringify({ seconds, connections, rounds, db, limits: limitsOn, summary, reference, ratios: ratioRows, rows }, null, 2) + "\n");
  } else {
    const what = rounds > 1 ? `median of ${rounds} rounds, ` : "";
    const where = db === "postgres" ? "PostgreSQL + Redis" : "SQLite";
    const cells = (r: ReturnType<typeof summarize>[number], withGoal: boolean) =>
      [
        r.route,
        r.rps,
        r.min === r.max ? "-" : `${r.min}-${r.max}`,
        ...(withGoal ? [r.goal === undefined ? "-" : `${r.goal} ${r.rps >= r.goal ? "met" : "MISSED"}`] : []),
        r.p50,
        r.p99,
        r.requests,
        r.non2xx,
        r.errors,
        r.timeouts,
        r.mismatches,
        r.cpuMsPerReq?.toFixed(3) ?? "n/a",
        r.valid ? "yes" : "NO",
      ].map(String);
    const head = (withGoal: boolean) => ["route", "req/s", "range", ...(withGoal ? ["goal"] : []), "p50 ms", "p99 ms", "requests", "non-2xx", "errors", "timeouts", "bad body", "server CPU ms/req", "valid"];
    let out = `\n${what}${seconds}s per route, ${connections} connections, loopback, ${where}, rate limits ${limitsOn ? "on (shipped defaults)" : "OFF"}\n`;
    out += `ours:\n${table(head(true), summary.map((r) => cells(r, true)))}`;
    if (withReference) {
      out += `\nnode-oidc-provider (in-memory adapter, refresh rotation on, client_secret_basic):\n${table(head(false), reference.map((r) => cells(r, false)))}`;
      const lines = ratioRows.map((r) => [
        r.route,
        `${r.ratio.toFixed(2)}x`,
        r.min === r.max ? "-" : `${r.min.toFixed(2)}-${r.max.toFixed(2)}`,
        r.against,
        r.goal === undefined ? "-" : `${r.goal}x ${r.ratio >= r.goal ? "met" : "MISSED"}`,
        r.valid ? "yes" : "NO",
      ]);
      out += `\nratios (ours / theirs per round, median):\n${table(["route", "ratio", "range", "against", "goal", "valid"], lines)}`;
    }
    process.stdout.write(out);
  }
  if (rows.some((r) => !r.valid)) process.exitCode = 1;
}

export { setUp, call, authorizationCodeFlow, type CallResult, type Fixture } from "./bench/fixture.js";
export { spawnServer } from "./bench/process.js";
export { summarize, ratios } from "./bench/report.js";

if (import.meta.url === `file://${process.argv[1]}`) {
  const serveDir = arg("serve");
  if (serveDir) await (await import("./bench/serve.js")).serveOurs(serveDir, Number(arg("port")));
  else if (arg("serve-reference")) await (await import("./bench/reference.js")).serveReference(Number(arg("port")));
  else await main();
}
