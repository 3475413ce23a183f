import { describe, expect, it } from "vitest";
import { useTestServer } from "../helpers/fixtures.js";
import { cookiesOf, type TestServer, uniqueClientIp, uniqueEmail } from "../helpers/server.js";

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

/** For each proxy setting: what a client's request carried in X-Forwarded-For, and the address we must record. */
const SETTINGS: { name: string; env: Record<string, string>; cases: [title: string, forwardedFor: string, recorded: string][] }[] = [
  {
    name: "TRUST_PROXY=true (one proxy)",
    env: { TRUST_PROXY: "true" },
    cases: [
      ["keys on the entry our proxy appended, not the client's leftmost one", "1.2.3.4, 5.6.7.8", "5.6.7.8"],
      ["takes a single entry as the client's (a proxy in front of a direct client)", "198.18.7.9", "198.18.7.9"],
      ["falls back to the socket address when the chosen entry is not an IP address", "1.2.3.4, not-an-ip", "127.0.0.1"],
    ],
  },
  {
    name: "TRUST_PROXY_HOPS=2",
    env: { TRUST_PROXY_HOPS: "2" },
    cases: [
      ["takes the second entry from the right", "9.9.9.9, 1.2.3.4, 5.6.7.8", "1.2.3.4"],
      ["falls back to the socket address when fewer proxies appended than configured", "5.6.7.8", "127.0.0.1"],
    ],
  },
  {
    name: "no proxy (the default)",
    env: {},
    cases: [["ignores X-Forwarded-For", "1.2.3.4, 5.6.7.8", "127.0.0.1"]],
  },
];

for (const { name, env, cases } of SETTINGS) {
  describe(name, () => {
    const server = useTestServer(env);

    it.each(cases)("%s", async (_title, forwardedFor, recorded) => {
      expect(await sessionAddress(server, { "x-forwarded-for": forwardedFor })).toBe(recorded);
    });
  });
}

describe("TRUST_PROXY=true with rate limits on", () => {
  const limited = useTestServer({ TRUST_PROXY: "true", RATE_LIMIT_ENABLED: "true" });

  it("rate-limits the proxied client however it varies the leftmost entry", async () => {
    const real = uniqueClientIp();
    const statuses: number[] = [];
    // better-auth's /sign-in/email rule: 20 a minute per address (auth.config.ts).
    for (let i = 0; i < 22; i++) {
      const res = await limited.api("/api/auth/sign-in/email", { body: { email: "nobody@example.com", password: "wrong password here" }, headers: { "x-forwarded-for": `10.0.${i}.1, ${real}` } });
      statuses.push(res.status);
    }
    expect(statuses.slice(0, 20)).not.toContain(429);
    expect(statuses.slice(20)).toEqual([429, 429]);
  });
});
