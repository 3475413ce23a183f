import { describe, expect, it } from "vitest";
import { newIdentity, signRequest } from "../helpers/bap.js";
import { useTestServer } from "../helpers/fixtures.js";
import { cookiesOf, uniqueClientIp, uniqueEmail } from "../helpers/server.js";

/**
 * Write quotas on /api/user/* and /api/bap/*: 60 writes a minute per signed-in user
 * (`profileWrite` in lib/limits.ts), answered 429 problem+json with Retry-After, counted per user.
 */

// TRUST_PROXY and an address of its own: sign-up's per-IP limit is on here too.
const server = useTestServer({ RATE_LIMIT_ENABLED: "true", TRUST_PROXY: "true" });

async function signedIn(): Promise<string> {
  const res = await server.api("/api/auth/sign-up/email", { body: { name: "Quota Person", email: uniqueEmail("quota"), password: "correct horse battery staple" }, headers: { "x-forwarded-for": uniqueClientIp() } });
  expect(res.status, res.text).toBe(200);
  return cookiesOf(res.headers);
}

describe("profile writes per user", () => {
  it("the 61st write in a minute is a 429 problem with Retry-After, for that user only", { timeout: 40_000 }, async () => {
    // Redis windows are aligned to the clock's minute: start the burst well inside one.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 45_000) await new Promise((resolve) => setTimeout(resolve, 60_500 - intoMinute));
    const cookie = await signedIn();
    const id = newIdentity();
    const body = JSON.stringify({ bapId: id.bapId });
    const registered = await server.api("/api/user/bap-ids", { cookie, body, headers: { "x-auth-token": signRequest(id.key, "/api/user/bap-ids", body) } });
    expect(registered.status, registered.text).toBe(201);

    const statuses: number[] = [];
    for (let i = 0; i < 59; i++) {
      const res = await server.api("/api/bap/profile", { cookie, body: { bapId: id.bapId, profile: { n: i } } });
      statuses.push(res.status);
    }
    expect(new Set(statuses)).toEqual(new Set([200]));

    // Every write route counts: a delete, a publication, another registration.
    const limited = [
      await server.api(`/api/bap/profile?bapId=${id.bapId}`, { method: "DELETE", cookie }),
      await server.api("/api/bap/profile/published", { cookie, body: { bapId: id.bapId, txid: "c".repeat(64), profile: { identity: {} } } }),
      await server.api("/api/user/bap-ids", { cookie, body, headers: { "x-auth-token": signRequest(id.key, "/api/user/bap-ids", body) } }),
    ];
    for (const res of limited) {
      expect(res.status, res.text).toBe(429);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
      expect(res.json).toMatchObject({ status: 429, title: "Too Many Requests" });
      expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(Number(res.headers.get("retry-after"))).toBeLessThanOrEqual(60);
    }

    // Reads are not writes.
    const read = await server.api(`/api/bap/profile?bapId=${id.bapId}`, { cookie });
    expect(read.status).toBe(200);

    // Another person's quota is their own.
    const other = await signedIn();
    const otherId = newIdentity();
    const otherBody = JSON.stringify({ bapId: otherId.bapId });
    const otherWrite = await server.api("/api/user/bap-ids", { cookie: other, body: otherBody, headers: { "x-auth-token": signRequest(otherId.key, "/api/user/bap-ids", otherBody) } });
    expect(otherWrite.status, otherWrite.text).toBe(201);
  });
});
