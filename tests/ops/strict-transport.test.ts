import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, startTestServer, type TestServer } from "../helpers/server.js";

/**
 * Strict-Transport-Security (lib/strict-transport.ts) on every answer when AUTH_URL is https.
 * The server itself speaks plain http on loopback (TLS ends at the proxy in front of it), so
 * the test reaches it at http://127.0.0.1:<port> while its public origin is https.
 */

const HSTS = "max-age=63072000; includeSubDomains";
let https: TestServer;
let plain: TestServer;
let httpsPort = 0;

beforeAll(async () => {
  httpsPort = await freePort();
  [https, plain] = await Promise.all([startTestServer({ PORT: String(httpsPort), AUTH_URL: `https://localhost:${httpsPort}` }), startTestServer()]);
});
afterAll(async () => {
  await Promise.all([https?.close(), plain?.close()]);
});

/** Pages, JSON, redirects, problems, better-auth and OAuth errors. */
const REQUESTS: [string, RequestInit][] = [
  ["/.well-known/openid-configuration", {}],
  ["/api/auth/jwks", {}],
  ["/api/auth/get-session", {}],
  ["/sign-in", {}],
  ["/", { redirect: "manual" }],
  ["/no-such-page", {}],
  ["/api/auth/oauth2/token", { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "grant_type=nope" }],
  ["/api/auth/sign-in/email", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }],
  ["/api/backup", {}],
];

describe("Strict-Transport-Security", () => {
  it("is on every answer when AUTH_URL is https", async () => {
    for (const [path, init] of REQUESTS) {
      const res = await fetch(`http://127.0.0.1:${httpsPort}${path}`, { redirect: "manual", ...init, headers: { origin: https.url, ...(init.headers as Record<string, string>) } });
      await res.arrayBuffer();
      expect(res.headers.get("strict-transport-security"), `${path} answered ${res.status}`).toBe(HSTS);
    }
  });

  it("is absent when AUTH_URL is http (development)", async () => {
    for (const [path, init] of REQUESTS) {
      const res = await fetch(plain.url + path, { redirect: "manual", ...init });
      await res.arrayBuffer();
      expect(res.headers.get("strict-transport-security"), path).toBeNull();
    }
  });
});
