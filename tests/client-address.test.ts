import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cookiesOf, startTestServer, uniqueEmail, type TestServer } from "./helpers/server.js";

/**
 * The client address (rate-limit keys, a session's ipAddress) behind our own proxies: the
 * X-Forwarded-For entry TRUST_PROXY_HOPS from the right, never the client-written leftmost one.
 */

/** The ipAddress better-auth recorded for a session created with these request headers. */
async function sessionAddress(server: TestServer, headers: Record<string, string>): Promise<string> {
  const res = await server.api("/api/auth/sign-up/email", { body: { name: "Proxy Person", email: uniqueEmail("xff"), password: "correct horse battery staple" }, headers });
  expect(res.status, res.text).toBe(200);
  const session = await server.api("/api/auth/get-session", { cookie: cookiesOf(res.headers) });
  return session.json.session.ipAddress;
}

describe("TRUST_PROXY=true (one proxy)", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ TRUST_PROXY: "true" });
  }, 30_000);
  afterAll(async () => {
    await server?.close();
  });

  it("keys on the entry our proxy appended, not the client's leftmost one", async () => {
    expect(await sessionAddress(server, { "x-forwarded-for": "1.2.3.4, 5.6.7.8" })).toBe("5.6.7.8");
  });

  it("takes a single entry as the client's (a proxy in front of a direct client)", async () => {
    expect(await sessionAddress(server, { "x-forwarded-for": "198.18.7.9" })).toBe("198.18.7.9");
  });

  it("falls back to the socket address when the chosen entry is not an IP address", async () => {
    expect(await sessionAddress(server, { "x-forwarded-for": "1.2.3.4, not-an-ip" })).toBe("127.0.0.1");
  });

  it("rate-limits the proxied client however it varies the leftmost entry", async () => {
    const limited = await startTestServer({ TRUST_PROXY: "true", RATE_LIMIT_ENABLED: "true" });
    try {
      const real = `198.18.${Math.floor(Math.random() * 254) + 1}.${Math.floor(Math.random() * 254) + 1}`;
      const statuses: number[] = [];
      // better-auth's /sign-in/email rule: 20 a minute per address (auth.config.ts).
      for (let i = 0; i < 22; i++) {
        const res = await limited.api("/api/auth/sign-in/email", { body: { email: "nobody@example.com", password: "wrong password here" }, headers: { "x-forwarded-for": `10.0.${i}.1, ${real}` } });
        statuses.push(res.status);
      }
      expect(statuses.slice(0, 20)).not.toContain(429);
      expect(statuses.slice(20)).toEqual([429, 429]);
    } finally {
      await limited.close();
    }
  });
});

describe("TRUST_PROXY_HOPS=2", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ TRUST_PROXY_HOPS: "2" });
  }, 30_000);
  afterAll(async () => {
    await server?.close();
  });

  it("takes the second entry from the right", async () => {
    expect(await sessionAddress(server, { "x-forwarded-for": "9.9.9.9, 1.2.3.4, 5.6.7.8" })).toBe("1.2.3.4");
  });

  it("falls back to the socket address when fewer proxies appended than configured", async () => {
    expect(await sessionAddress(server, { "x-forwarded-for": "5.6.7.8" })).toBe("127.0.0.1");
  });
});

describe("no proxy (the default)", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  }, 30_000);
  afterAll(async () => {
    await server?.close();
  });

  it("ignores X-Forwarded-For", async () => {
    expect(await sessionAddress(server, { "x-forwarded-for": "1.2.3.4, 5.6.7.8" })).toBe("127.0.0.1");
  });
});
