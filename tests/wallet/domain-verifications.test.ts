import { describe, expect, it } from "vitest";
import { useDnsServer } from "../helpers/dns-server.js";
import { useHttpsServer } from "../helpers/https-server.js";
import { useTestServer } from "../helpers/fixtures.js";
import { REDIRECT } from "../helpers/oauth.js";
import type { TestServer } from "../helpers/server.js";
import { personWithIdentity, type Person } from "../helpers/wallet.js";

/**
 * Domain verification (/api/domain-verifications): challenges for an owned profile, checked
 * against a local DNS server (TXT) and a local HTTPS server (the well-known file, fetched
 * through the guarded fetcher with the test's certificate authority); a loopback domain is
 * refused without OUTBOUND_ALLOW_PRIVATE; records expire and are verified again.
 */
const dns = useDnsServer();
const https = useHttpsServer();
const settings = () => ({
  DNS_RESOLVER_SERVERS: dns.address,
  OUTBOUND_EXTRA_CA_FILE: https.caFile,
  DOMAIN_VERIFICATION_HTTPS_PORT: String(https.port),
});
const server = useTestServer(() => ({ ...settings(), OUTBOUND_ALLOW_PRIVATE: "true" }));

const PATH = "/api/domain-verifications";
const WELL_KNOWN = "/.well-known/sigma-domain-verification.txt";
const DAY = 24 * 3600 * 1000;
let counter = 0;
const uniqueDomain = () => `app${++counter}-${process.pid}.example.test`;

function create(on: TestServer, person: Person, body: Record<string, unknown>) {
  return on.api(PATH, { cookie: person.cookie, body: { bapId: person.id.bapId, method: "dns", ...body } });
}
const verify = (on: TestServer, person: Person, id: string) => on.api(`${PATH}/${id}/verify`, { cookie: person.cookie, method: "POST" });
const list = (on: TestServer, person: Person, bapId = person.id.bapId) => on.api(`${PATH}?bapId=${encodeURIComponent(bapId)}`, { cookie: person.cookie });

const expectProblem = (res: { status: number; headers: Headers; json: any }, status: number, code?: string) => {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toContain("application/problem+json");
  if (code) expect(res.json.code).toBe(code);
};

/** Sets a date column of a record straight in the database, as time passing would leave it. */
async function setDate(on: TestServer, id: string, column: "challengeExpiresAt" | "expiresAt", when: Date) {
  await on.db.updateTable("domainVerification").set({ [column]: when }).where("id", "=", id).execute();
}

describe("DNS challenges", () => {
  it("answers 201 with the TXT record to publish, and lists it as pending", async () => {
    const person = await personWithIdentity(server);
    const domain = uniqueDomain();
    const before = Date.now();
    const res = await create(server, person, { domain: `${domain.toUpperCase()}.` });
    expect(res.status).toBe(201);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const token = res.json.challenge.token as string;
    expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(res.json).toEqual({
      id: expect.any(String),
      bapId: person.id.bapId,
      domain,
      method: "dns",
      oauthClientId: null,
      status: "pending",
      challenge: { token, method: "dns", name: `_sigma-challenge.${domain}`, value: `sigma-domain-verification=${token}`, expiresAt: expect.any(String) },
      verifiedAt: null,
      expiresAt: null,
      lastCheckedAt: null,
      failureReason: null,
      createdAt: expect.any(String),
    });
    // DOMAIN_VERIFICATION_CHALLENGE_TTL: 7 days by default.
    const expires = Date.parse(res.json.challenge.expiresAt);
    expect(expires - before).toBeGreaterThanOrEqual(7 * DAY - 1000);
    expect(expires - Date.now()).toBeLessThanOrEqual(7 * DAY);
    const listed = await list(server, person);
    expect(listed.status).toBe(200);
    expect(listed.json.verifications).toEqual([res.json]);
  });

  it("fails while the record is missing or wrong, and verifies once the TXT record holds the token", async () => {
    const person = await personWithIdentity(server);
    const domain = uniqueDomain();
    const { json: record } = await create(server, person, { domain });
    const name = record.challenge.name as string;

    const missing = await verify(server, person, record.id);
    expectProblem(missing, 422, "DOMAIN_NOT_VERIFIED");
    expect(missing.json.detail).toContain(`no TXT record at ${name}`);
    expect(dns.questions).toContain(name);

    dns.setTxt(name, [["v=spf1 -all"], ["sigma-domain-verification=not-the-token"]]);
    const wrong = await verify(server, person, record.id);
    expectProblem(wrong, 422, "DOMAIN_NOT_VERIFIED");
    expect(wrong.json.detail).toContain("do not include");
    const failed = (await list(server, person)).json.verifications[0];
    expect(failed).toMatchObject({ status: "failed", failureReason: expect.stringContaining("do not include"), lastCheckedAt: expect.any(String), verifiedAt: null });

    // A long value split into several strings of one record is one value (as TXT records are read).
    const value = record.challenge.value as string;
    dns.setTxt(name, [["v=spf1 -all"], [value.slice(0, 10), value.slice(10)]]);
    const before = Date.now();
    const ok = await verify(server, person, record.id);
    expect(ok.status).toBe(200);
    expect(ok.json).toMatchObject({ id: record.id, status: "verified", failureReason: null, verifiedAt: expect.any(String) });
    // DOMAIN_VERIFICATION_VALIDITY: 90 days by default.
    expect(Date.parse(ok.json.expiresAt) - before).toBeGreaterThanOrEqual(90 * DAY - 1000);
    expect(Date.parse(ok.json.expiresAt) - Date.now()).toBeLessThanOrEqual(90 * DAY);
    expect((await list(server, person)).json.verifications[0]).toEqual(ok.json);
  });

  it("a challenge that ran out cannot be met; a verification past its validity is expired until verified again", async () => {
    const person = await personWithIdentity(server);
    const { json: stale } = await create(server, person, { domain: uniqueDomain() });
    dns.setTxt(stale.challenge.name, [[stale.challenge.value]]);
    await setDate(server, stale.id, "challengeExpiresAt", new Date(Date.now() - 1000));
    expect((await list(server, person)).json.verifications[0]).toMatchObject({ id: stale.id, status: "expired" });
    expectProblem(await verify(server, person, stale.id), 409, "DOMAIN_CHALLENGE_EXPIRED");

    const { json: record } = await create(server, person, { domain: uniqueDomain() });
    dns.setTxt(record.challenge.name, [[record.challenge.value]]);
    expect((await verify(server, person, record.id)).status).toBe(200);
    await setDate(server, record.id, "challengeExpiresAt", new Date(Date.now() - 2000));
    await setDate(server, record.id, "expiresAt", new Date(Date.now() - 1000));
    const shown = (await list(server, person)).json.verifications.find((r: { id: string }) => r.id === record.id);
    expect(shown.status).toBe("expired");
    // Re-verification: the same token, still published, proves the domain again.
    const again = await verify(server, person, record.id);
    expect(again.status).toBe(200);
    expect(again.json.status).toBe("verified");
    expect(Date.parse(again.json.expiresAt)).toBeGreaterThan(Date.now() + 89 * DAY);
  });
});

describe("HTTPS challenges", () => {
  it("verifies when the well-known file holds the token, fetched over TLS with the configured authority", async () => {
    const person = await personWithIdentity(server);
    const res = await create(server, person, { domain: "localhost", method: "https" });
    expect(res.status).toBe(201);
    const token = res.json.challenge.token;
    expect(res.json.challenge).toEqual({ token, method: "https", url: `https://localhost:${https.port}${WELL_KNOWN}`, content: token, expiresAt: expect.any(String) });

    https.serve(WELL_KNOWN, "someone else's token\n");
    const wrong = await verify(server, person, res.json.id);
    expectProblem(wrong, 422, "DOMAIN_NOT_VERIFIED");
    expect(wrong.json.detail).toContain("does not hold the token");

    https.serve(WELL_KNOWN, { status: 302, headers: { location: `https://localhost:${https.port}/elsewhere` } });
    const redirected = await verify(server, person, res.json.id);
    expectProblem(redirected, 422, "DOMAIN_NOT_VERIFIED");
    expect(redirected.json.detail).toContain("redirect");

    https.serve(WELL_KNOWN, `${token}\n`);
    const ok = await verify(server, person, res.json.id);
    expect(ok.status).toBe(200);
    expect(ok.json.status).toBe("verified");
    expect(https.requests.filter((p) => p === "/elsewhere")).toEqual([]);
  });

  describe("without OUTBOUND_ALLOW_PRIVATE", () => {
    const guarded = useTestServer(settings);

    it("refuses a domain on a loopback address without sending it anything", async () => {
      const person = await personWithIdentity(guarded);
      const res = await create(guarded, person, { domain: "localhost", method: "https" });
      https.serve(WELL_KNOWN, `${res.json.challenge.token}\n`);
      const seen = https.requests.length;
      const refused = await verify(guarded, person, res.json.id);
      expectProblem(refused, 422, "DOMAIN_NOT_VERIFIED");
      expect(refused.json.detail).toMatch(/was not fetched: .*loopback/);
      expect(https.requests.length).toBe(seen);
      expect((await list(guarded, person)).json.verifications[0]).toMatchObject({ status: "failed", failureReason: expect.stringMatching(/loopback/) });
    });
  });
});

describe("who may do what", () => {
  it("needs a session", async () => {
    expectProblem(await server.api(`${PATH}?bapId=1BAPxxxxxxxxxxxxxxxxxxxxxx`), 401);
    expectProblem(await server.api(PATH, { body: { bapId: "1BAPxxxxxxxxxxxxxxxxxxxxxx", domain: "example.com", method: "dns" } }), 401);
  });

  it("works only on the caller's own profiles, records and OAuth clients", async () => {
    const owner = await personWithIdentity(server);
    const other = await personWithIdentity(server);
    const { json: record } = await create(server, owner, { domain: uniqueDomain() });

    expectProblem(await create(server, other, { bapId: owner.id.bapId, domain: uniqueDomain() }), 404);
    expectProblem(await list(server, other, owner.id.bapId), 404);
    expectProblem(await verify(server, other, record.id), 404, "DOMAIN_VERIFICATION_NOT_FOUND");

    // A client registered while signed in belongs to that person; an open registration to no one.
    const registered = await server.api("/api/auth/oauth2/register", {
      cookie: owner.cookie,
      body: { client_name: "Owned App", redirect_uris: ["https://owned.example.test/callback"], token_endpoint_auth_method: "none", grant_types: ["authorization_code"], response_types: ["code"] },
    });
    expect(registered.status).toBe(201);
    const clientId = registered.json.client_id as string;
    const anonymous = await server.api("/api/auth/oauth2/register", {
      body: { client_name: "Nobody's App", redirect_uris: [REDIRECT], application_type: "native", token_endpoint_auth_method: "none", grant_types: ["authorization_code"], response_types: ["code"] },
    });
    expect(anonymous.status).toBe(201);

    expectProblem(await create(server, other, { domain: uniqueDomain(), oauthClientId: clientId }), 403, "OAUTH_CLIENT_NOT_OWNED");
    expectProblem(await create(server, owner, { domain: uniqueDomain(), oauthClientId: anonymous.json.client_id }), 403, "OAUTH_CLIENT_NOT_OWNED");
    const tied = await create(server, owner, { domain: "owned.example.test", oauthClientId: clientId });
    expect(tied.status).toBe(201);
    expect(tied.json.oauthClientId).toBe(clientId);
  });

  it.each([
    ["https://example.com", "a URL"],
    ["example.com:443", "a port"],
    ["192.0.2.1", "an IP address"],
    ["exa mple.com", "a space"],
    ["-example.com", "a leading hyphen"],
    ["bücher.example", "a U-label"],
  ])("refuses %s as a domain (%s)", async (domain) => {
    const person = await personWithIdentity(server);
    const res = await create(server, person, { domain });
    expectProblem(res, 400);
    expect(res.json.errors).toEqual([expect.objectContaining({ pointer: "/domain" })]);
  });

  it("refuses a method other than dns and https", async () => {
    const person = await personWithIdentity(server);
    expectProblem(await create(server, person, { domain: uniqueDomain(), method: "email" }), 400);
  });
});

describe("caps per person", () => {
  // 3 verifications held pending and 3 checks a minute per person; rate limits on.
  const capped = useTestServer(() => ({
    ...settings(),
    OUTBOUND_ALLOW_PRIVATE: "true",
    RATE_LIMIT_ENABLED: "true",
    DOMAIN_VERIFICATION_MAX_PENDING: "3",
    DOMAIN_VERIFICATION_RATE_LIMIT: "3",
  }));

  it("refuses a verification past DOMAIN_VERIFICATION_MAX_PENDING pending ones with 409, until one is verified or expires", async () => {
    const person = await personWithIdentity(capped);
    const held = [];
    for (let i = 0; i < 3; i++) held.push((await create(capped, person, { domain: uniqueDomain() })).json);
    expect(held.map((r) => r.status)).toEqual(["pending", "pending", "pending"]);
    const refused = await create(capped, person, { domain: uniqueDomain() });
    expectProblem(refused, 409, "DOMAIN_VERIFICATION_PENDING_LIMIT");
    expect(refused.json.detail).toContain("3 pending");
    // A failed check leaves it pending (it may still be met): still refused.
    expectProblem(await verify(capped, person, held[0].id), 422, "DOMAIN_NOT_VERIFIED");
    expectProblem(await create(capped, person, { domain: uniqueDomain(), method: "https" }), 409, "DOMAIN_VERIFICATION_PENDING_LIMIT");
    // Someone else holds none.
    expect((await create(capped, await personWithIdentity(capped), { domain: uniqueDomain() })).status).toBe(201);

    // A verified one no longer counts...
    dns.setTxt(held[1].challenge.name, [[held[1].challenge.value]]);
    expect((await verify(capped, person, held[1].id)).status).toBe(200);
    const fourth = await create(capped, person, { domain: uniqueDomain() });
    expect(fourth.status).toBe(201);
    expectProblem(await create(capped, person, { domain: uniqueDomain() }), 409, "DOMAIN_VERIFICATION_PENDING_LIMIT");
    // ...nor one whose challenge ran out.
    await setDate(capped, held[2].id, "challengeExpiresAt", new Date(Date.now() - 1000));
    expect((await create(capped, person, { domain: uniqueDomain() })).status).toBe(201);
  });

  it("answers 429 with Retry-After past DOMAIN_VERIFICATION_RATE_LIMIT checks a minute, without looking the domain up", async () => {
    const person = await personWithIdentity(capped);
    const { json: record } = await create(capped, person, { domain: uniqueDomain() });
    for (let i = 0; i < 3; i++) expectProblem(await verify(capped, person, record.id), 422, "DOMAIN_NOT_VERIFIED");
    const asked = dns.questions.filter((q) => q === record.challenge.name).length;
    const refused = await verify(capped, person, record.id);
    expectProblem(refused, 429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(dns.questions.filter((q) => q === record.challenge.name).length).toBe(asked);
    // Per person: another one's checks go on.
    const other = await personWithIdentity(capped);
    const { json: theirs } = await create(capped, other, { domain: uniqueDomain() });
    expectProblem(await verify(capped, other, theirs.id), 422, "DOMAIN_NOT_VERIFIED");
  });
});
