/**
 * The speed figures of patches/README.md: our server with every patch beside the same server
 * with some hunks reversed, in the same run.
 *
 *   node_modules/.bin/tsx scripts/bench/hunks.ts --hunks=ba-static-router --routes=off:userinfo,off:refresh
 *
 * `--hunks=a+b,c`: one variant per comma-separated group of hunk ids (rows of patches/README.md;
 * `control` is a second unpatched server, the noise floor). `--routes=lane:route,...`: routes of
 * scripts/bench/scenarios.ts, on a server with the fast lane (`on`) or with introspection and
 * get-session through better-auth's handler (`off`). For each variant a fresh base and a fresh
 * variant are started and set up alike, then loaded at the same time, each by its own client
 * (so whatever else loads the machine loads both), `--windows` times (default 4); each window
 * prints both servers' CPU ms per request (from /proc) and their ratio, and the end the medians.
 * A variant's files are the installed ones with those hunks reversed, swapped in at module load
 * by a hook (the installed node_modules is never changed). Rate limits are off.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import autocannon from "autocannon";
import { arg } from "./args.js";
import { setUp } from "./fixture.js";
import { processCpuMs, spawnServer, stopServer } from "./process.js";
import { scenarios, type RouteName, type Target } from "./scenarios.js";

const SELF = fileURLToPath(import.meta.url);
const PATCHES = "patches";

/** The module-load hook of a variant server: the installed file's path -> the variant's text. */
const HOOKS = `import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
let files = {};
export function initialize(data) { files = data; }
export async function load(url, context, next) {
  const result = await next(url, context);
  const path = url.startsWith("file:") ? fileURLToPath(url) : "";
  return files[path] ? { ...result, source: readFileSync(files[path], "utf8"), shortCircuit: true } : result;
}
`;
const REGISTER = `import { register } from "node:module";
import { readFileSync } from "node:fs";
if (process.env.HUNKS_VARIANT) register(new URL("./hooks.mjs", import.meta.url), { data: JSON.parse(readFileSync(process.env.HUNKS_VARIANT, "utf8")) });
`;

/** Every hunk by its README id: the installed file, and the hunk's lines. */
function readHunks(): Map<string, { path: string; lines: string[] }> {
  const byFile = new Map<string, string[][]>();
  for (const name of readdirSync(PATCHES).filter((f) => f.endsWith(".patch"))) {
    let current: string[][] = [];
    for (const line of readFileSync(`${PATCHES}/${name}`, "utf8").split("\n")) {
      const diff = /^diff --git a\/(\S+) b\//.exec(line);
      if (diff) byFile.set(diff[1]!, (current = []));
      else if (line.startsWith("@@ ")) current.push([]);
      else if (current.length && /^[ +-]/.test(line) && !line.startsWith("--- ") && !line.startsWith("+++ ")) current.at(-1)!.push(line);
    }
  }
  // The README lists a file's hunks in patch order (tests/meta/patches.test.ts).
  const section = readFileSync(`${PATCHES}/README.md`, "utf8").split(/^## Hunks$/m)[1]!.split(/^## /m)[0]!;
  const seen = new Map<string, number>();
  const hunks = new Map<string, { path: string; lines: string[] }>();
  for (const line of section.split("\n").filter((l) => l.startsWith("| ") && !l.startsWith("| Id "))) {
    const [id, pkg, file] = line.split("|").slice(1, 4).map((cell) => cell.trim());
    const path = `node_modules/${pkg}/${file}`;
    const index = seen.get(path) ?? 0;
    seen.set(path, index + 1);
    hunks.set(id!, { path, lines: byFile.get(path)![index]! });
  }
  return hunks;
}

/** The variant's files (in `dir`) for these hunk ids, and the map the hook reads. */
function writeVariant(ids: string[], dir: string): string {
  const all = readHunks();
  const texts = new Map<string, string>();
  for (const id of ids) {
    const hunk = all.get(id);
    if (!hunk) throw new Error(`no hunk ${id} in ${PATCHES}/README.md`);
    const patched = hunk.lines.filter((l) => !l.startsWith("-")).map((l) => l.slice(1)).join("\n");
    const original = hunk.lines.filter((l) => !l.startsWith("+")).map((l) => l.slice(1)).join("\n");
    const text = texts.get(hunk.path) ?? readFileSync(hunk.path, "utf8");
    if (text.split(patched).length !== 2) throw new Error(`${id}: its text is not found once in ${hunk.path}`);
    texts.set(hunk.path, text.replace(patched, () => original));
  }
  const files: Record<string, string> = {};
  [...texts].forEach(([path, text], i) => {
    writeFileSync(join(dir, `${i}.mjs`), text);
    files[resolve(path)] = join(dir, `${i}.mjs`);
  });
  writeFileSync(join(dir, "files.json"), JSON.stringify(files));
  return join(dir, "files.json");
}

async function serve(dir: string, port: number, laneOff: boolean) {
  const { loadEnv } = await import("../../lib/env.js");
  const { start } = await import("../../server.js");
  const url = `http://127.0.0.1:${port}`;
  const env = { NODE_ENV: "development", PORT: String(port), HOST: "127.0.0.1", AUTH_URL: url, DATA_DIR: dir, DATABASE_URL: join(dir, "bench.sqlite"), LOG_LEVEL: "error" };
  const config = loadEnv({ ...env, BETTER_AUTH_SECRET: randomBytes(32).toString("base64url"), AUTO_MIGRATE: "true", RATE_LIMIT_ENABLED: "false" });
  // Deprecated routes are answered by the app, so the fast lane leaves them to better-auth.
  const through = (method: string, path: string) => ({ method, path, deprecatedAt: new Date(0) });
  const running = await start(config, laneOff ? { deprecations: [through("POST", "/api/auth/oauth2/introspect"), through("GET", "/api/auth/get-session")] } : {});
  process.stdout.write(JSON.stringify({ ready: url }) + "\n");
  process.on("SIGTERM", () => void running.close().then(() => process.exit(0)));
}

interface Server {
  url: string;
  child: Awaited<ReturnType<typeof spawnServer>>["child"];
  target: Target;
  newChains: (count: number) => Promise<{ basic: string; tokens: string[] }>;
}

async function startServer(lane: string, variant: string, connections: number): Promise<Server> {
  const dir = mkdtempSync(join(tmpdir(), "idp-hunks-"));
  const s = await spawnServer(SELF, [`--serve-hunks=${dir}`, ...(lane === "off" ? ["--lane-off"] : [])], { ...process.env, HUNKS_VARIANT: variant });
  const fx = await setUp(s.url, connections * 3);
  const paths = { discovery: "/.well-known/openid-configuration", jwks: "/api/auth/jwks", introspect: "/api/auth/oauth2/introspect", token: "/api/auth/oauth2/token", getSession: "/api/auth/get-session", userinfo: "/api/auth/oauth2/userinfo" };
  return { url: s.url, child: s.child, newChains: fx.newChains, target: { ...fx, paths } };
}

/** Both servers loaded at once for `seconds`; each one's CPU ms per request. */
async function window(servers: Server[], route: RouteName, seconds: number, connections: number) {
  const options = await Promise.all(
    servers.map(async (s) => {
      if (route === "refresh") Object.assign(s.target, await s.newChains(connections * 3).then((c) => ({ refreshBasic: c.basic, refreshTokens: c.tokens })));
      const sc = scenarios(s.target).find((x) => x.name === route)!;
      return { url: s.url + sc.path, connections, pipelining: 1, timeout: 10, ...sc.options, ...(sc.verify ? { verifyBody: sc.verify } : {}) } as autocannon.Options;
    }),
  );
  await Promise.all(options.map((o) => autocannon({ ...o, duration: 0.5 })));
  const before = servers.map((s) => processCpuMs(s.child.pid)!);
  const results = await Promise.all(options.map((o) => autocannon({ ...o, duration: seconds })));
  return results.map((r, i) => {
    if (r.non2xx || r.errors || r.timeouts || r.mismatches || !r.requests.total) throw new Error(`${route}: not every answer was a checked 2xx`);
    return (processCpuMs(servers[i]!.child.pid)! - before[i]!) / r.requests.total;
  });
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

async function main() {
  const variants = (arg("hunks") ?? "control").split(",");
  const routes = (arg("routes") ?? "off:userinfo").split(",").map((r) => r.split(":") as [string, RouteName]);
  const windows = Number(arg("windows") ?? 4);
  const seconds = Number(arg("duration") ?? 2.5);
  const connections = Number(arg("connections") ?? 4);
  const dir = mkdtempSync(join(tmpdir(), "idp-hunks-"));
  writeFileSync(join(dir, "hooks.mjs"), HOOKS);
  writeFileSync(join(dir, "register.mjs"), REGISTER);
  // The flags `npm start` runs the server with, and the hook (inert without HUNKS_VARIANT).
  process.argv.push(`--server-node-flags=--max-semi-space-size=32 --import=${pathToFileURL(join(dir, "register.mjs")).href}`);
  for (const [v, group] of variants.entries()) {
    const variantDir = mkdtempSync(join(dir, `v${v}-`));
    const files = group === "control" ? "" : writeVariant(group.split("+"), variantDir);
    for (const [lane, route] of routes) {
      const servers = await Promise.all([startServer(lane, "", connections), startServer(lane, files, connections)]);
      try {
        await window(servers, route, 3, connections);
        const ratios: number[] = [];
        const cpu: number[][] = [[], []];
        for (let w = 0; w < windows; w++) {
          const [base, without] = await window(servers, route, seconds, connections);
          cpu[0]!.push(base!);
          cpu[1]!.push(without!);
          ratios.push(without! / base!);
          process.stderr.write(`${group} ${lane}:${route} window ${w + 1}: with ${base!.toFixed(3)} without ${without!.toFixed(3)} ms/req, ${(without! / base!).toFixed(3)}x\n`);
        }
        const slower = ratios.filter((r) => r > 1).length;
        process.stdout.write(`${group} ${lane}:${route}: ${median(cpu[0]!).toFixed(2)} -> ${median(cpu[1]!).toFixed(2)} ms/req without, ${median(ratios).toFixed(2)}x [${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)}], ${slower} of ${windows} windows slower\n`);
      } finally {
        for (const s of servers) await stopServer(s.child);
      }
    }
  }
}

if (arg("serve-hunks")) await serve(arg("serve-hunks")!, Number(arg("port")), arg("lane-off") === "true");
else await main();
