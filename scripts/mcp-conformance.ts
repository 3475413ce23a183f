/**
 * `npm run conformance:mcp`: the authorization-server checks of the MCP conformance suite
 * (`@modelcontextprotocol/conformance`, its `authorization` command) against this server.
 *
 * The suite has two authorization-server scenarios, run in order by one CLI invocation:
 * - `authorization-server-metadata-endpoint`: the metadata at the URLs MCP clients probe for
 *   the issuer (RFC 8414 and OIDC, path-inserted and path-appended): 200, JSON, `issuer`
 *   exactly the issuer, the endpoints, `response_types_supported` with `code`,
 *   `code_challenge_methods_supported` with `S256`, `client_id_metadata_document_supported`.
 * - `authorization-code-grant`: as the client we register here (a public client with a
 *   loopback redirect URI, RFC 8252), it builds an authorization request with PKCE S256,
 *   `state` and `resource` (RFC 8707: our own MCP server at /mcp), prints the URL for a user
 *   agent and waits on its own loopback callback server; then checks the response (`code`,
 *   `state` and `iss` once each, `iss` equal to the issuer, no `error`), redeems the code and
 *   checks the token response (200, JSON, `Cache-Control: no-store`, `access_token`, `token_type`).
 *
 * This script starts the server in-process on a temporary SQLite database on a free loopback
 * port (tests/helpers/server.ts: TEST_DATABASE_URL and TEST_REDIS_URL choose PostgreSQL and
 * Redis instead, as for the tests), creates a person, registers the client, and runs the CLI
 * twice: as that registered client, and as a client ID metadata document it publishes over
 * https on loopback (a certificate made here). When the CLI prints the authorization URL, a
 * headless Chromium (Debian's, driven by playwright-core) opens it, signs in on our sign-in
 * page and presses Allow on our consent page; the browser then lands on the suite's callback.
 * Every check the suite records must be SUCCESS: a failed, skipped or warning check (and a CLI
 * exit other than 0) makes the script exit 1. The suite's own report is printed as it runs;
 * `--keep` keeps its checks.json files (the path is printed).
 *
 * The suite starts from a client we hand it and stops at the token response; the loop an MCP
 * client runs from /mcp alone (401, RFC 9728, discovery, the tools) is
 * tests/oauth/mcp-client-flow.test.ts, with the official SDK's client.
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer as createHttpsServer } from "node:https";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { Browser } from "playwright-core";
import { fillByLabel, launchBrowser, submitWith } from "../tests/helpers/browser.js";
import { freePort, startTestServer } from "../tests/helpers/server.js";

const PASSWORD = "correct horse battery staple";
/** The whole run, browser step included; the suite itself would wait 5 minutes for its callback. */
const DEADLINE_MS = 120_000;

/**
 * The suite's CLI imports `globSync` from `fs` by name, which Node 20 (our floor) does not
 * have (it came in 22); only its `tier-check` command calls it. On Node 20 a module hook
 * hands the CLI `node:fs` plus a `globSync` that throws, and nothing else changes.
 */
const NODE20_FS_HOOK = (() => {
  const shim = `export * from "node:fs"; export { default } from "node:fs"; export function globSync() { throw new Error("fs.globSync needs Node 22"); }`;
  const hooks =
    `export async function resolve(specifier, context, next) {` +
    ` if ((specifier === "fs" || specifier === "node:fs") && String(context.parentURL).includes("/@modelcontextprotocol/conformance/"))` +
    ` return { url: ${JSON.stringify("data:text/javascript," + encodeURIComponent(shim))}, shortCircuit: true };` +
    ` return next(specifier, context); }`;
  const register = `import { register } from "node:module"; import fs from "node:fs"; if (typeof fs.globSync !== "function") register(${JSON.stringify("data:text/javascript," + encodeURIComponent(hooks))});`;
  return "data:text/javascript," + encodeURIComponent(register);
})();

interface Check {
  id: string;
  name: string;
  status: string;
  description: string;
  errorMessage?: string;
}

function cliPath(): string {
  const require = createRequire(import.meta.url);
  const pkg = require.resolve("@modelcontextprotocol/conformance/package.json");
  const bin = (JSON.parse(readFileSync(pkg, "utf8")) as { bin: Record<string, string> }).bin.conformance!;
  return join(dirname(pkg), bin);
}

/** A self-signed certificate for 127.0.0.1, made for this run (the openssl CLI), and an https server for client ID metadata documents. */
async function startDocumentServer(dir: string) {
  const key = join(dir, "key.pem");
  const cert = join(dir, "cert.pem");
  execFileSync("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key, "-out", cert], { stdio: "ignore" });
  const documents = new Map<string, string>();
  const server = createHttpsServer({ key: readFileSync(key), cert: readFileSync(cert) }, (req, res) => {
    const body = documents.get(new URL(req.url ?? "/", "https://127.0.0.1").pathname);
    if (body === undefined) return res.writeHead(404).end();
    res.writeHead(200, { "content-type": "application/json", "cache-control": "max-age=300" }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    caFile: cert,
    /** Publishes `document` (with its own URL as client_id) and returns that URL. */
    publish(path: string, document: Record<string, unknown>) {
      documents.set(path, JSON.stringify({ client_id: `${base}${path}`, ...document }));
      return `${base}${path}`;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function main(): Promise<number> {
  const workDir = mkdtempSync(join(tmpdir(), "mcp-conformance-"));
  const documents = await startDocumentServer(workDir);
  // The documents are on loopback over a certificate made here: the development settings that reach them.
  const server = await startTestServer({ LOG_LEVEL: process.env.LOG_LEVEL || "silent", OUTBOUND_ALLOW_PRIVATE: "true", OUTBOUND_EXTRA_CA_FILE: documents.caFile });
  const browser = await launchBrowser();
  try {
    const email = `conformance-${Date.now().toString(36)}@example.com`;
    const signUp = await server.api("/api/auth/sign-up/email", { body: { name: "Conformance Person", email, password: PASSWORD } });
    if (signUp.status !== 200) throw new Error(`sign-up: ${signUp.status} ${signUp.text}`);
    const person = { email, password: PASSWORD };

    // The suite's callback server listens on 127.0.0.1:<port>/callback; each client is registered for it.
    const port = await freePort();
    const redirectUri = `http://127.0.0.1:${port}/callback`;
    const client = {
      client_name: "MCP Conformance",
      redirect_uris: [redirectUri],
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code"],
      response_types: ["code"],
      application_type: "native",
    };
    // The two ways an MCP client identifies itself: dynamic client registration (RFC 7591) ...
    const reg = await server.api("/api/auth/oauth2/register", { body: client });
    if (reg.status !== 201 || typeof reg.json?.client_id !== "string") throw new Error(`client registration: ${reg.status} ${reg.text}`);
    // ... and a client ID metadata document, MCP's preferred way.
    const documentClientId = documents.publish("/mcp-conformance/client.json", client);

    const problems: string[] = [];
    let passed = 0;
    let total = 0;
    for (const [label, clientId] of [
      ["registered client", reg.json.client_id as string],
      ["client ID metadata document", documentClientId],
    ] as const) {
      const outputDir = join(workDir, label.replaceAll(" ", "-"));
      const run = await runSuite({ server: server.url, clientId, port, redirectUri, outputDir, browser, person });
      passed += run.checks.filter((c) => c.status === "SUCCESS").length;
      total += run.checks.length;
      problems.push(...run.problems.map((p) => `${label}: ${p}`));
    }
    console.log(`\nMCP conformance (authorization server): ${passed}/${total} checks passed`);
    for (const p of problems) console.error(`  FAILED ${p}`);
    return problems.length === 0 ? 0 : 1;
  } finally {
    await browser.close();
    await server.close();
    await documents.close();
    if (process.argv.includes("--keep")) console.log(`checks kept in ${workDir}`);
    else rmSync(workDir, { recursive: true, force: true });
  }
}

/** One run of the suite's authorization command as `clientId`, with the browser as its user agent. */
async function runSuite(opts: { server: string; clientId: string; port: number; redirectUri: string; outputDir: string; browser: Browser; person: { email: string; password: string } }) {
  const resource = `${opts.server}/mcp`;
  const args = [
    "--import",
    NODE20_FS_HOOK,
    cliPath(),
    "authorization",
    "--url",
    opts.server,
    "--client-id",
    opts.clientId,
    "--resource",
    resource,
    "--port",
    String(opts.port),
    "--spec-version",
    "2026-07-28",
    "--output-dir",
    opts.outputDir,
  ];
  console.log(`\nMCP conformance (authorization server): ${opts.server}, client ${opts.clientId}, resource ${resource}`);
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });

  // The authorization URL is the line after "Access the following URL in your browser".
  const authorizationUrl = new Promise<string>((resolve) => {
    let buffered = "";
    let announced = false;
    child.stdout!.on("data", (chunk: Buffer) => {
      process.stdout.write(chunk);
      buffered += chunk.toString();
      let newline: number;
      while ((newline = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, newline).trim();
        buffered = buffered.slice(newline + 1);
        if (announced && line.startsWith(opts.server)) {
          announced = false;
          resolve(line);
        }
        if (line.startsWith("Access the following URL")) announced = true;
      }
    });
  });
  const exited = new Promise<number>((resolve) => child.once("exit", (code, signal) => resolve(code ?? (signal ? 1 : 0))));
  const timer = setTimeout(() => child.kill("SIGTERM"), DEADLINE_MS);

  // The user agent, in a fresh profile: sign in, then Allow; the browser lands on the suite's callback.
  const context = await opts.browser.newContext();
  const browserStep = (async () => {
    const url = await Promise.race([authorizationUrl, exited.then(() => null)]);
    if (!url) return "the CLI exited without asking for a user agent";
    const page = await context.newPage();
    await page.goto(url);
    if (new URL(page.url()).pathname !== "/sign-in") return `expected our sign-in page, got ${page.url()}`;
    await fillByLabel(page, "E-mail", opts.person.email);
    await fillByLabel(page, "Password", opts.person.password);
    await submitWith(page, "Sign in");
    if (new URL(page.url()).pathname !== "/consent") return `expected our consent page after sign-in, got ${page.url()}`;
    await submitWith(page, "Allow");
    const back = new URL(page.url());
    if (`${back.origin}${back.pathname}` !== opts.redirectUri) return `expected the suite's callback after consent, got ${page.url()}`;
    return null;
  })().catch((err: unknown) => `browser: ${err instanceof Error ? err.message : String(err)}`);

  const [code, browserProblem] = await Promise.all([exited, browserStep]);
  clearTimeout(timer);
  await context.close();

  const checks = collectChecks(opts.outputDir);
  const problems: string[] = [];
  if (browserProblem) problems.push(browserProblem);
  if (code !== 0) problems.push(`the conformance CLI exited with ${code}`);
  for (const scenario of ["authorization-server-metadata-endpoint", "authorization-code-grant"]) {
    if (!checks.some((c) => c.scenario === scenario)) problems.push(`scenario ${scenario} recorded no checks`);
  }
  for (const c of checks) {
    if (c.status !== "SUCCESS") problems.push(`${c.scenario}: ${c.id} ${c.status}: ${c.description}${c.errorMessage ? ` (${c.errorMessage})` : ""}`);
  }
  return { checks, problems };
}

/** The checks.json of every scenario run (the CLI names each directory authorization-server-<scenario>-<time>). */
function collectChecks(outputDir: string): (Check & { scenario: string })[] {
  if (!existsSync(outputDir)) return [];
  return readdirSync(outputDir).flatMap((dir) => {
    const scenario = dir.replace(/^authorization-server-/, "").replace(/-\d{4}-\d{2}-\d{2}T.*$/, "");
    const checks = JSON.parse(readFileSync(join(outputDir, dir, "checks.json"), "utf8")) as Check[];
    return checks.map((c) => ({ ...c, scenario }));
  });
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
