import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RouteFamily } from "../../routes/families.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

/**
 * app.ts is a table of route families (routes/families.ts). The table's order is not the
 * mounting order: the same app built from the table reversed and shuffled answers every
 * request below alike, body limits, guards and fall-through to better-auth included.
 */
const env = { METRICS_TOKEN: "m".repeat(40), BACKUP_MAX_BYTES: "1024" };
const big = (bytes: number) => "x".repeat(bytes);

/** A sample across families whose mounts nest or sit side by side. */
const SAMPLE: { method: string; path: string; body?: string; headers?: Record<string, string> }[] = [
  { method: "GET", path: "/healthz" },
  { method: "GET", path: "/readyz" },
  { method: "GET", path: "/.well-known/openid-configuration" },
  { method: "GET", path: "/.well-known/auth" },
  { method: "GET", path: "/llms.txt" },
  { method: "GET", path: "/metrics" },
  { method: "GET", path: "/api/auth/jwks" },
  { method: "POST", path: "/api/auth/jwks", body: "{}" },
  { method: "GET", path: "/api/auth/ok" },
  { method: "GET", path: "/api/auth/no-such-endpoint" },
  { method: "POST", path: "/api/auth/sign-in/email", body: big(1024 * 1024 + 1) },
  { method: "POST", path: "/api/auth/oauth2/token", body: big(1024 * 1024 + 1) },
  { method: "GET", path: "/api/auth/subscription/status" },
  { method: "GET", path: "/api/subscription/status" },
  { method: "GET", path: "/api/auth/wallet/connect" },
  { method: "GET", path: "/api/wallet/connect" },
  { method: "POST", path: "/api/wallet/connect", body: "{}", headers: { origin: "https://elsewhere.example" } },
  { method: "GET", path: "/api/certificates/types" },
  { method: "GET", path: "/api/certificates/wallet-binding/resolve" },
  { method: "POST", path: "/api/certificates/wallet-binding/challenge", body: "{}" },
  { method: "GET", path: "/api/certificates/status/abc" },
  { method: "POST", path: "/api/backup", body: big(32 * 1024) },
  { method: "GET", path: "/api/backup" },
  { method: "POST", path: "/api/user/bap-ids", body: big(64 * 1024 + 1) },
  { method: "GET", path: "/api/bap/profile" },
  { method: "POST", path: "/api/agents", body: big(64 * 1024 + 1) },
  { method: "GET", path: "/api/agents" },
  { method: "GET", path: "/api/authorized-apps" },
  { method: "GET", path: "/api/admin/audit-log" },
  { method: "GET", path: "/api/domain-verifications" },
  { method: "GET", path: "/api/openapi.json" },
  { method: "GET", path: "/mcp" },
  { method: "GET", path: "/sign-in" },
  { method: "POST", path: "/sign-in", body: big(64 * 1024 + 1), headers: { "content-type": "application/x-www-form-urlencoded" } },
  { method: "GET", path: "/no-such-page" },
  { method: "GET", path: "/api/no-such-route" },
];

/** What must not change with the order: status, the headers a guard or limit sets, the problem code. */
async function answer(server: TestServer, { method, path, body, headers = {} }: (typeof SAMPLE)[number]) {
  const res = await server.app.request(path, { method, body, headers: { "content-type": "application/json", ...headers } });
  const type = res.headers.get("content-type") ?? "";
  const text = await res.text();
  const code = type.includes("json") && text.startsWith("{") ? (JSON.parse(text) as { code?: string; error?: string }) : {};
  return {
    request: `${method} ${path}`,
    status: res.status,
    type: type.split(";")[0],
    cacheControl: res.headers.get("cache-control"),
    csp: res.headers.has("content-security-policy"),
    code: code.code ?? code.error ?? null,
  };
}

/** A fixed shuffle, so a failure can be replayed. */
function shuffled<T>(list: T[], seed: number): T[] {
  const out = [...list];
  let state = seed;
  for (let i = out.length - 1; i > 0; i--) {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    const j = state % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

describe("the table of route families", () => {
  let table: TestServer;
  let reversed: TestServer;
  let mixed: TestServer;
  let families: RouteFamily[] = [];
  beforeAll(async () => {
    table = await startTestServer(env, { routeOrder: (list) => (families = list) });
    reversed = await startTestServer(env, { routeOrder: (list) => [...list].reverse() });
    mixed = await startTestServer(env, { routeOrder: (list) => shuffled(list, 23) });
  }, 60_000);
  afterAll(async () => {
    await Promise.all([table?.close(), reversed?.close(), mixed?.close()]);
  });

  it("answers the same whatever the order of the table", async () => {
    const expected: Awaited<ReturnType<typeof answer>>[] = [];
    for (const request of SAMPLE) expected.push(await answer(table, request));
    for (const server of [reversed, mixed]) {
      const got = [];
      for (const request of SAMPLE) got.push(await answer(server, request));
      expect(got).toEqual(expected);
    }
    // The sample reaches the rules it is meant to: nested mounts, limits and guards.
    const by = (request: string) => expected.find((e) => e.request === request)!;
    expect(by("GET /api/auth/jwks")).toMatchObject({ status: 200, type: "application/json" });
    expect(by("GET /api/certificates/types").cacheControl).not.toBe("no-store");
    expect(by("GET /api/certificates/wallet-binding/resolve").cacheControl).toBe("no-store");
    expect(by("POST /api/auth/sign-in/email")).toMatchObject({ status: 413, type: "application/problem+json" });
    // An OAuth endpoint's 413 is RFC 6749's object, like its other refusals.
    expect(by("POST /api/auth/oauth2/token")).toMatchObject({ status: 413, type: "application/json" });
    expect(by("POST /api/backup")).toMatchObject({ status: 413 });
    expect(by("POST /api/user/bap-ids")).toMatchObject({ status: 413 });
    expect(by("POST /sign-in")).toMatchObject({ status: 413 });
    expect(by("GET /api/wallet/connect")).toMatchObject({ status: 401, cacheControl: "no-store" });
    expect(by("GET /healthz")).toMatchObject({ status: 200, cacheControl: "no-store" });
    expect(by("GET /sign-in")).toMatchObject({ status: 200, type: "text/html", csp: true });
    expect(by("GET /no-such-page")).toMatchObject({ status: 404, type: "application/problem+json" });
  });

  it("every family declares a body limit, and a body one byte over it gets 413 at each mount", async () => {
    expect(families.length).toBeGreaterThan(15);
    const over: string[] = [];
    for (const { name, bodyLimit, mounts } of families) {
      expect(typeof bodyLimit === "number" ? bodyLimit > 0 : typeof bodyLimit === "function", name).toBe(true);
      if (typeof bodyLimit !== "number") continue;
      for (const mount of mounts.keys()) {
        const res = await table.app.request(mount, { method: "POST", body: big(bodyLimit + 1), headers: { "content-type": "application/json" } });
        if (res.status !== 413) over.push(`${name} ${mount}: ${res.status}`);
      }
    }
    expect(over).toEqual([]);
  });
});
