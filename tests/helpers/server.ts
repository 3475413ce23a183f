import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseJsonOrNull } from "../../lib/json.js";
import { loadEnv } from "../../lib/env.js";
import { start, type StartOptions } from "../../server.js";

export type TestServer = Awaited<ReturnType<typeof startTestServer>>;

/** A TCP port free on loopback right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const address = srv.address();
      const port = typeof address === "object" && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * A real server on a loopback port: SQLite in a fresh temporary file, or the PostgreSQL
 * database named by TEST_DATABASE_URL (the whole suite runs on either).
 */
export async function startTestServer(env: Record<string, string> = {}, options: StartOptions = {}) {
  const dir = mkdtempSync(join(tmpdir(), "idp-test-"));
  const port = await freePort();
  const config = loadEnv({
    NODE_ENV: "test",
    PORT: String(port),
    HOST: "127.0.0.1",
    AUTH_URL: `http://127.0.0.1:${port}`,
    DATA_DIR: dir,
    DATABASE_URL: process.env.TEST_DATABASE_URL || join(dir, "test.sqlite"),
    BETTER_AUTH_SECRET: "test-secret-test-secret-test-secret-0123456789",
    LOG_LEVEL: process.env.TEST_LOG_LEVEL || "silent",
    AUTO_MIGRATE: "true",
    // Counters are per client IP and every test shares 127.0.0.1; the rate-limit tests turn this on.
    RATE_LIMIT_ENABLED: "false",
    // One pruning lease is shared by every server on the test database; the retention tests turn it on.
    AUDIT_LOG_RETENTION_DAYS: "0",
    ...(process.env.TEST_REDIS_URL ? { REDIS_URL: process.env.TEST_REDIS_URL } : {}),
    ...env,
  });
  // A caller that must know the address in advance (to register it elsewhere) passes PORT and AUTH_URL.
  const url = config.authUrl;
  const running = await start(config, options);

  const api = apiClient(url);
  // Where this process listens: AUTH_URL's address unless a caller gave it another public URL
  // (an instance of a deployment whose AUTH_URL is another instance's, as behind a load balancer).
  const localUrl = `http://${config.host}:${running.port}`;

  return {
    url,
    /** The port this instance listens on (differs from AUTH_URL's when a caller set AUTH_URL). */
    port: running.port,
    config,
    db: running.database.db,
    dbType: running.database.type,
    /** The database handle itself (its unit of work too), for tests that run a store over it. */
    database: running.database,
    /** The running app and auth instance, for tests that inspect what is served (tests/meta/openapi.test.ts). */
    app: running.app,
    auth: running.auth,
    api,
    /** Writes this instance's analytics counters to the database now (plugins/analytics/flush.ts). */
    flushAnalytics: () => running.analytics.flush(),
    /** This very process, whatever AUTH_URL says: its address and the same JSON API call sent straight to it. */
    local: { url: localUrl, api: apiClient(localUrl, url) },
    async close() {
      await running.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** JSON API calls to the server at `url`; each sends Origin like a browser on our own origin would. */
export function apiClient(url: string, origin: string = url) {
  return async function api(path: string, init: { method?: string; body?: unknown; cookie?: string; headers?: Record<string, string>; signal?: AbortSignal } = {}) {
    // A browser's Origin: the origin only, also when AUTH_URL has a path.
    const headers: Record<string, string> = { origin: new URL(origin).origin, ...init.headers };
    if (init.cookie) headers.cookie = init.cookie;
    let body: string | undefined;
    if (init.body !== undefined) {
      headers["content-type"] ??= "application/json";
      body = typeof init.body === "string" ? init.body : JSON.stringify(init.body);
    }
    return readResponse(await fetch(url + path, { method: init.method ?? (body ? "POST" : "GET"), headers, body, redirect: "manual", signal: init.signal }));
  };
}

/** A response's status, headers and text, and the text parsed as JSON where it is JSON (null otherwise). */
export async function readResponse(res: Response) {
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: parseJsonOrNull(text) as any, text };
}

/** POSTs an HTML-form body (application/x-www-form-urlencoded) and does not follow redirects. */
export async function postForm(server: { url: string }, path: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  const res = await fetch(server.url + path, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(fields).toString(),
    redirect: "manual",
  });
  return readResponse(res);
}

/** The `name=value` pairs of a response's Set-Cookie headers, ready for a Cookie header. */
export function cookiesOf(headers: Headers): string {
  return headers
    .getSetCookie()
    .map((c) => c.split(";")[0] ?? "")
    .filter((c) => !c.endsWith("="))
    .join("; ");
}

let counter = 0;
export function uniqueEmail(prefix = "user"): string {
  counter += 1;
  return `${prefix}-${Date.now().toString(36)}-${process.pid}-${counter}@example.com`;
}

/**
 * A client address of its own (sent as X-Forwarded-For to a TRUST_PROXY server), so rate-limit
 * counters shared through Redis by parallel test files and earlier runs never collide.
 */
export function uniqueClientIp(): string {
  const n = () => Math.floor(Math.random() * 254) + 1;
  return `198.18.${n()}.${n()}`;
}
