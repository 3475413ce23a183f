import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { enrolKey, keySignIn, newIdentity, signRequest } from "../helpers/bap.js";
import { useTestServer } from "../helpers/fixtures.js";
import { authorize, pkce, REDIRECT, registerClient, signUp, token } from "../helpers/oauth.js";
import { uniqueClientIp, type TestServer } from "../helpers/server.js";
import { exchange, GRANT as TOKEN_EXCHANGE, mcp, personsGrant, registerAgent } from "../helpers/token-exchange.js";

/**
 * GET /metrics (issue 12, Observability): the Prometheus exposition behind METRICS_TOKEN, with
 * request counts and latencies by route pattern and status, tokens by grant, sign-ins by method
 * and result, 429s, Bitcoin-Auth replay refusals, the database pool and event-loop lag.
 */
const METRICS_TOKEN = randomBytes(24).toString("base64url");

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The text exposition format (Prometheus 0.0.4): `name{label="value",...} number` per sample line. */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/.exec(line);
    if (!match) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, name, value] of match[2]?.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g) ?? []) labels[name!] = value!.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

async function scrape(server: TestServer) {
  const res = await server.api("/metrics", { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  const samples = parseExposition(res.text);
  /** The value of the sample with this name and (at least) these labels; 0 when there is none. */
  const value = (name: string, labels: Record<string, string> = {}) =>
    samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((sum, s) => sum + s.value, 0);
  const has = (name: string) => samples.some((s) => s.name === name);
  const routes = () => new Set(samples.filter((s) => s.name === "idp_http_requests_total").map((s) => s.labels.route));
  return { samples, value, has, routes };
}

describe("metrics without METRICS_TOKEN", () => {
  const server = useTestServer();

  it("are not served: /metrics answers 404 as any unknown path", async () => {
    expect((await server.api("/metrics")).status).toBe(404);
    expect((await server.api("/metrics", { headers: { authorization: "Bearer anything-at-all" } })).status).toBe(404);
  });
});

describe("metrics with METRICS_TOKEN", () => {
  // Rate limits on, per client address (X-Forwarded-For from our one proxy): the 429 test uses an address of its own.
  const server = useTestServer({ METRICS_TOKEN, RATE_LIMIT_ENABLED: "true", TRUST_PROXY_HOPS: "1" });

  it("refuse a missing or wrong bearer token with 401", async () => {
    for (const authorization of [undefined, `Bearer ${METRICS_TOKEN}x`, `Bearer ${METRICS_TOKEN.slice(1)}`, `Basic ${Buffer.from(`metrics:${METRICS_TOKEN}`).toString("base64")}`]) {
      const res = await server.api("/metrics", { headers: authorization ? { authorization } : {} });
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/);
      expect(res.text).not.toContain("idp_http_requests_total");
    }
  });

  it("count sign-ins, tokens by grant and requests by route and status, with a latency histogram", async () => {
    const before = await scrape(server);
    const person = await signUp(server);
    expect((await server.api("/api/auth/sign-in/email", { body: { email: person.email, password: "not the password" } })).status).toBe(401);
    expect((await server.api("/api/auth/sign-in/email", { body: { email: person.email, password: person.password } })).status).toBe(200);
    const client = await registerClient(server);
    const { verifier, challenge } = pkce();
    const auth = await authorize(server, { clientId: client.client_id, cookie: person.cookie, challenge });
    const tokens = await token(server, { grant_type: "authorization_code", code: auth.code!, redirect_uri: REDIRECT, client_id: client.client_id, code_verifier: verifier });
    expect(tokens.status).toBe(200);
    const refreshed = await token(server, { grant_type: "refresh_token", refresh_token: tokens.json.refresh_token, client_id: client.client_id });
    expect(refreshed.status).toBe(200);
    // A refused grant is no token issued.
    expect((await token(server, { grant_type: "refresh_token", refresh_token: "not-a-token", client_id: client.client_id })).status).toBe(400);
    const after = await scrape(server);

    const moved = (name: string, labels: Record<string, string> = {}) => after.value(name, labels) - before.value(name, labels);
    expect(moved("idp_sign_ins_total", { method: "password", result: "failure" })).toBe(1);
    expect(moved("idp_sign_ins_total", { method: "password", result: "success" })).toBe(1);
    expect(moved("idp_tokens_issued_total", { grant_type: "authorization_code" })).toBe(1);
    expect(moved("idp_tokens_issued_total", { grant_type: "refresh_token" })).toBe(1);
    expect(moved("idp_tokens_issued_total")).toBe(2);

    const tokenRoute = { method: "POST", route: "/api/auth/oauth2/token" };
    expect(moved("idp_http_requests_total", { ...tokenRoute, status: "200" })).toBe(2);
    expect(moved("idp_http_requests_total", { ...tokenRoute, status: "400" })).toBe(1);
    expect(moved("idp_http_requests_total", { method: "POST", route: "/api/auth/sign-in/email", status: "401" })).toBe(1);
    expect(moved("idp_http_requests_total", { method: "POST", route: "/api/auth/sign-up/email", status: "200" })).toBe(1);
    // The histogram of the token route: count, sum and cumulative buckets up to +Inf.
    expect(moved("idp_http_request_duration_seconds_count", { ...tokenRoute, status: "200" })).toBe(2);
    expect(moved("idp_http_request_duration_seconds_sum", { ...tokenRoute, status: "200" })).toBeGreaterThan(0);
    const buckets = after.samples.filter((s) => s.name === "idp_http_request_duration_seconds_bucket" && s.labels.route === tokenRoute.route && s.labels.status === "200");
    expect(buckets.length).toBeGreaterThan(5);
    expect(buckets.find((s) => s.labels.le === "+Inf")?.value).toBe(after.value("idp_http_request_duration_seconds_count", { ...tokenRoute, status: "200" }));
    // Routes are patterns, never raw paths holding ids or codes.
    for (const route of after.routes()) expect(route).not.toMatch(/[?=]|[A-Za-z0-9_-]{32,}/);

    // Runtime metrics: event-loop lag, and on PostgreSQL the pool.
    expect(after.has("nodejs_eventloop_lag_seconds")).toBe(true);
    expect(after.has("nodejs_eventloop_lag_p99_seconds")).toBe(true);
    if (server.dbType === "postgres") {
      expect(after.value("idp_db_pool_connections")).toBeGreaterThan(0);
      expect(after.has("idp_db_pool_idle_connections")).toBe(true);
      expect(after.has("idp_db_pool_waiting_requests")).toBe(true);
    } else {
      expect(after.has("idp_db_pool_connections")).toBe(false);
    }
  });

  it("count token exchanges (RFC 8693) under their own grant type", async () => {
    const grant = await personsGrant(server);
    const agent = await registerAgent(server);
    const before = await scrape(server);
    await exchange(agent, grant.accessToken, { resource: mcp(server) });
    const after = await scrape(server);
    expect(after.value("idp_tokens_issued_total", { grant_type: TOKEN_EXCHANGE }) - before.value("idp_tokens_issued_total", { grant_type: TOKEN_EXCHANGE })).toBe(1);
  });

  it("count key sign-ins and Bitcoin-Auth replay refusals", async () => {
    const before = await scrape(server);
    const id = newIdentity();
    expect((await enrolKey(server, id)).status).toBe(200);
    expect((await keySignIn(server, id)).status).toBe(200);
    const body = JSON.stringify({ bapId: id.bapId });
    const signed = signRequest(id.key, "/api/auth/sign-in/sigma", body);
    expect((await server.api("/api/auth/sign-in/sigma", { body, headers: { "x-auth-token": signed } })).status).toBe(200);
    expect((await server.api("/api/auth/sign-in/sigma", { body, headers: { "x-auth-token": signed } })).status).toBe(401);
    const after = await scrape(server);
    const moved = (name: string, labels: Record<string, string> = {}) => after.value(name, labels) - before.value(name, labels);
    expect(moved("idp_sign_ins_total", { method: "key", result: "success" })).toBe(2);
    expect(moved("idp_sign_ins_total", { method: "key", result: "failure" })).toBe(1);
    expect(moved("idp_bitcoin_auth_replays_refused_total", { family: "auth" })).toBe(1);
    expect(moved("idp_bitcoin_auth_replays_refused_total")).toBe(1);
  });

  it("count 429 answers by route", async () => {
    const before = await scrape(server);
    const ip = uniqueClientIp();
    const email = `nobody-${randomBytes(6).toString("hex")}@example.com`;
    let limited = 0;
    // better-auth's rule for /sign-in/email: 20 per minute per address.
    for (let i = 0; i < 22; i++) {
      const res = await server.api("/api/auth/sign-in/email", { body: { email, password: "wrong password" }, headers: { "x-forwarded-for": ip } });
      if (res.status === 429) limited++;
    }
    expect(limited).toBeGreaterThan(0);
    const after = await scrape(server);
    expect(after.value("idp_rate_limited_total", { route: "/api/auth/sign-in/email" }) - before.value("idp_rate_limited_total", { route: "/api/auth/sign-in/email" })).toBe(limited);
  });

  it("keep route labels bounded: unknown paths share one label", async () => {
    await server.api(`/${randomBytes(8).toString("hex")}`); // the unknown-path label exists from here on
    await server.api(`/api/auth/${randomBytes(8).toString("hex")}`);
    const before = (await scrape(server)).routes();
    for (let i = 0; i < 50; i++) {
      const segments = Array.from({ length: 1 + (i % 4) }, () => randomBytes(6).toString("hex"));
      const prefix = ["", "/api", "/api/auth", "/api/agents/x"][i % 4];
      await server.api(`${prefix}/${segments.join("/")}?q=${i}`);
    }
    const after = (await scrape(server)).routes();
    const added = [...after].filter((route) => !before.has(route));
    expect(added.length).toBeLessThanOrEqual(1);
    expect(after.has("unmatched")).toBe(true);
    expect(after.has("/api/auth/other")).toBe(true);
  });
});
