import { beforeAll, describe, expect, it } from "vitest";
import { useTestServer } from "../helpers/fixtures.js";
import { authorize, pkce, REDIRECT, signUp, token } from "../helpers/oauth.js";
import { startTestServer } from "../helpers/server.js";
import type { TierOwnershipChecker } from "../../plugins/subscriptions/ownership.js";
import type { PaidTierId } from "../../plugins/subscriptions/tiers.js";

/**
 * Per-client analytics (Pro): a known sequence of sign-ins, token grants and refusals is
 * counted exactly, per UTC day, and answered to the client's Pro owner only
 * (GET /api/clients/{clientId}/analytics, JSON and CSV). The counts are written by the flusher;
 * the test writes them when it wants them (`flushAnalytics`), the interval being long.
 */
const owned = new Map<string, PaidTierId>();
const ownership: TierOwnershipChecker = {
  async ownsTierNft(userId, tier) {
    return owned.get(userId) === tier ? { nftOrigin: `${"cd".repeat(32)}_0`, walletAddress: "1AnalyticsWa11etxxxxxxxxxxxxxxxxx" } : null;
  },
};
const server = useTestServer({ ANALYTICS_FLUSH_MS: "300000" }, { subscriptions: { ownership } });
const basic = (id: string, secret: string) => ({ authorization: `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}` });
const today = () => new Date().toISOString().slice(0, 10);

type Person = Awaited<ReturnType<typeof signUp>>;
let owner: Person;
let client: { id: string; secret: string };

/** A confidential web client owned by `person`, for the code, refresh and client credentials grants. */
async function ownedClient(person: Person, name = "Shop") {
  const res = await server.api("/api/auth/oauth2/register", {
    cookie: person.cookie,
    body: {
      client_name: name,
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: "client_secret_basic",
      grant_types: ["authorization_code", "refresh_token", "client_credentials"],
      response_types: ["code"],
    },
  });
  expect(res.status, res.text).toBe(201);
  return { id: res.json.client_id as string, secret: res.json.client_secret as string };
}

/** One sign-in to the client: authorize (with consent the first time), then the code for tokens. */
async function signInTo(person: Person) {
  const { verifier, challenge } = pkce();
  const auth = await authorize(server, { clientId: client.id, cookie: person.cookie, challenge });
  expect(auth.code, auth.url.toString()).toBeTruthy();
  const res = await token(server, { grant_type: "authorization_code", code: auth.code!, redirect_uri: REDIRECT, code_verifier: verifier }, basic(client.id, client.secret));
  expect(res.status, res.text).toBe(200);
  return { code: auth.code!, verifier, refreshToken: res.json.refresh_token as string };
}

const analytics = (path: string, person: Person = owner) => server.api(`/api/clients/${encodeURIComponent(client.id)}${path}`, { cookie: person.cookie });

describe("client analytics", () => {
  beforeAll(async () => {
    owner = await signUp(server);
    owned.set(owner.user.id, "pro");
    client = await ownedClient(owner);
    const alice = await signUp(server);
    const bob = await signUp(server);
    const carol = await signUp(server);

    // Three sign-ins by two people: alice twice (the second with her consent on record), bob once.
    const first = await signInTo(alice);
    const second = await signInTo(alice);
    await signInTo(bob);
    // Two refreshes: one answered by the fast lane, one by the generic endpoint (a field the lane does not take).
    const fast = await token(server, { grant_type: "refresh_token", refresh_token: first.refreshToken }, basic(client.id, client.secret));
    expect(fast.status, fast.text).toBe(200);
    const generic = await token(server, { grant_type: "refresh_token", refresh_token: second.refreshToken, x: "generic" }, basic(client.id, client.secret));
    expect(generic.status, generic.text).toBe(200);
    // One client credentials grant.
    const machine = await token(server, { grant_type: "client_credentials" }, basic(client.id, client.secret));
    expect(machine.status, machine.text).toBe(200);
    // Refusals: a spent code (invalid_grant), a wrong secret (invalid_client), a denied consent (access_denied).
    const spent = await token(server, { grant_type: "authorization_code", code: first.code, redirect_uri: REDIRECT, code_verifier: first.verifier }, basic(client.id, client.secret));
    expect(spent.json?.error).toBe("invalid_grant");
    const wrong = await token(server, { grant_type: "client_credentials" }, basic(client.id, "not-the-secret"));
    expect(wrong.json?.error).toBe("invalid_client");
    const denied = await authorize(server, { clientId: client.id, cookie: carol.cookie, consent: false });
    expect(denied.url.searchParams.get("error")).toBe("access_denied");
    // Requests naming a client that does not exist are not counted anywhere.
    await token(server, { grant_type: "client_credentials" }, basic("no-such-client", "x"));
    await server.flushAnalytics();
  });

  it("counts a known sequence of sign-ins, tokens and refusals exactly", async () => {
    const res = await analytics("/analytics?days=7");
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const body = res.json;
    expect(body).toMatchObject({ clientId: client.id, days: 7, to: today(), activeGrants: 2 });
    expect(body.totals).toEqual({
      authorizations: 3,
      people: 2,
      tokens: { authorization_code: 3, refresh_token: 2, client_credentials: 1 },
      refusals: { invalid_grant: 1, invalid_client: 1, access_denied: 1 },
    });
    expect(body.daily).toHaveLength(7);
    expect(body.daily[6]).toEqual({ date: today(), authorizations: 3, people: 2, tokens: body.totals.tokens, refusals: body.totals.refusals });
    for (const day of body.daily.slice(0, 6)) expect(day).toMatchObject({ authorizations: 0, people: 0, tokens: {}, refusals: {} });
  });

  it("adds each flush to what is stored: flushing twice counts nothing twice, a person still once a day", async () => {
    await server.flushAnalytics();
    const before = (await analytics("/analytics?days=30")).json;
    expect(before.daily).toHaveLength(30);
    const dave = await signUp(server);
    await signInTo(dave);
    await server.flushAnalytics();
    await server.flushAnalytics();
    const after = (await analytics("/analytics?days=30")).json;
    expect(after.totals.authorizations).toBe(before.totals.authorizations + 1);
    expect(after.totals.people).toBe(before.totals.people + 1);
    expect(after.totals.tokens.authorization_code).toBe(before.totals.tokens.authorization_code + 1);
    expect(after.totals.refusals).toEqual(before.totals.refusals);
  });

  it("adds up the counts of several instances sharing the database, each writing its own at shutdown too", async () => {
    const before = (await analytics("/analytics?days=7")).json;
    // A second instance on the same database: SQLite's file, or the PostgreSQL database of the suite.
    const database = server.config.database;
    const other = await startTestServer({ DATABASE_URL: database.kind === "sqlite" ? database.file : database.url, ANALYTICS_FLUSH_MS: "300000" }, { subscriptions: { ownership } });
    try {
      const a = await token(server, { grant_type: "client_credentials" }, basic(client.id, client.secret));
      const b = await token(other, { grant_type: "client_credentials" }, basic(client.id, client.secret));
      expect([a.status, b.status]).toEqual([200, 200]);
    } finally {
      // The other instance writes its counts as it stops (no flush asked for).
      await other.close();
    }
    await server.flushAnalytics();
    const after = (await analytics("/analytics?days=7")).json;
    expect(after.totals.tokens.client_credentials).toBe(before.totals.tokens.client_credentials + 2);
  });

  it("downloads the same figures as CSV, by ?format=csv and at /analytics.csv", async () => {
    const json = (await analytics("/analytics?days=7")).json;
    for (const path of ["/analytics?days=7&format=csv", "/analytics.csv?days=7"]) {
      const res = await analytics(path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
      expect(res.headers.get("content-disposition")).toMatch(/^attachment; filename="analytics-.+-7d\.csv"$/);
      const lines = res.text.trim().split("\r\n");
      expect(lines[0]).toBe("date,metric,key,count");
      expect(lines).toContain(`${today()},authorizations,,${json.totals.authorizations}`);
      expect(lines).toContain(`${today()},people,,${json.totals.people}`);
      expect(lines).toContain(`${today()},tokens,authorization_code,${json.totals.tokens.authorization_code}`);
      expect(lines).toContain(`${today()},refusals,access_denied,1`);
      expect(lines.at(-1)).toBe(`${today()},active_grants,,${json.activeGrants}`);
    }
  });

  it("answers only 7, 30 or 90 days, with a 400 problem for anything else", async () => {
    for (const days of ["14", "0", "abc", "30.5", ""]) {
      const res = await analytics(`/analytics?days=${days}`);
      expect(res.status, days).toBe(400);
      expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    }
    expect((await analytics("/analytics?days=90")).json.daily).toHaveLength(90);
    expect((await analytics("/analytics?format=xml")).status).toBe(400);
  });

  it("answers someone else's client like an unknown one (404), also to a Pro member", async () => {
    const stranger = await signUp(server);
    owned.set(stranger.user.id, "pro");
    for (const path of ["/analytics", "/analytics.csv"]) {
      const res = await analytics(path, stranger);
      expect(res.status).toBe(404);
      expect(res.json).toMatchObject({ code: "CLIENT_NOT_FOUND", status: 404 });
    }
    const unknown = await server.api("/api/clients/no-such-client/analytics", { cookie: owner.cookie });
    expect(unknown.status).toBe(404);
    expect(unknown.json.code).toBe("CLIENT_NOT_FOUND");
  });

  it("refuses an owner below Pro with a 403 problem naming the tier", async () => {
    const person = await signUp(server);
    owned.set(person.user.id, "plus");
    const theirs = await ownedClient(person, "Plus app");
    const res = await server.api(`/api/clients/${encodeURIComponent(theirs.id)}/analytics`, { cookie: person.cookie });
    expect(res.status).toBe(403);
    expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(res.json).toMatchObject({ code: "TIER_REQUIRED", status: 403, title: expect.any(String) });
    expect(res.json.detail).toContain("Pro");
    expect(res.json.detail).toContain("Plus");
  });

  it("wants a session", async () => {
    const res = await server.api(`/api/clients/${encodeURIComponent(client.id)}/analytics`);
    expect(res.status).toBe(401);
  });
});
