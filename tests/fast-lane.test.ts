import { describe, expect, it } from "vitest";
import { useTestServer } from "./helpers/fixtures.js";

/**
 * lib/fast-lane.ts answers discovery and JWKS before the Hono app: the same body and headers as
 * the app's own answer (asked here with app.request, which never passes the lane), the same
 * request id rule, and the same metrics labels.
 */
const METRICS_TOKEN = "metrics-token-metrics-token-metrics-token";
const server = useTestServer({ METRICS_TOKEN });

const IGNORED = new Set(["date", "connection", "keep-alive", "x-request-id", "content-length", "transfer-encoding"]);
const headersOf = (res: Response) => Object.fromEntries([...res.headers].filter(([name]) => !IGNORED.has(name)));

async function metricsText() {
  const res = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  return res.text();
}
const count = (text: string, route: string) => Number(new RegExp(`idp_http_requests_total\\{method="GET",route="${route.replace(/[/.]/g, "\\$&")}",status="200"\\} (\\d+)`).exec(text)?.[1] ?? 0);

describe("fast lane", () => {
  for (const path of ["/.well-known/openid-configuration", "/api/auth/jwks"]) {
    it(`${path}: the app's body and headers, a request id, counted under the app's label`, async () => {
      const app = await server.app.request(path);
      await fetch(server.url + path);
      const before = await metricsText();
      const fast = await fetch(server.url + path);
      expect(fast.status).toBe(200);
      expect(await fast.text()).toBe(await app.text());
      expect(headersOf(fast)).toEqual(headersOf(app));
      expect(fast.headers.get("x-request-id")).toMatch(/^[\w-]{36}$/);
      const mine = await fetch(server.url + path, { headers: { "x-request-id": "trace-123" } });
      expect(mine.headers.get("x-request-id")).toBe("trace-123");
      const after = await metricsText();
      expect(count(after, path) - count(before, path)).toBe(2);
    });
  }

  it("a request with a query string, or another method, goes to the app", async () => {
    const res = await fetch(`${server.url}/api/auth/jwks?x=1`);
    expect(res.status).toBe(200);
    const post = await fetch(`${server.url}/.well-known/openid-configuration`, { method: "POST" });
    expect(post.status).toBe(404);
  });
});
