import pg from "pg";
import { describe, expect, it } from "vitest";
import { submitWith } from "../helpers/browser.js";
import { signInThroughPage, useBrowser, useTestServer } from "../helpers/fixtures.js";
import { registerClient, signUp, token } from "../helpers/oauth.js";
import { cookiesOf, uniqueClientIp, type TestServer } from "../helpers/server.js";

/** RFC 8628: a device asks for a code, polls the token endpoint, a person approves at /device. */
const DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";
const POLL_INTERVAL = 1;

const server = useTestServer({ DEVICE_POLL_INTERVAL: String(POLL_INTERVAL) });
const browser = useBrowser();

async function deviceClient(target: TestServer = server, grantTypes = [DEVICE_GRANT]) {
  // A device-only client has no redirect URI: it leaves redirect_uris out (RFC 7591 §2).
  return registerClient(target, { client_name: "Living Room TV", redirect_uris: undefined, application_type: undefined, grant_types: grantTypes, response_types: [], token_endpoint_auth_method: "none" });
}

/** The device's first step (RFC 8628 §3.1): a form post to the advertised endpoint. */
async function requestCode(target: TestServer, clientId: string, scope = "openid profile email") {
  const res = await fetch(`${target.url}/api/auth/device/code`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ client_id: clientId, scope }),
  });
  return { status: res.status, headers: res.headers, json: (await res.json()) as Record<string, any> };
}

const poll = (target: TestServer, clientId: string, deviceCode: string) => token(target, { grant_type: DEVICE_GRANT, device_code: deviceCode, client_id: clientId });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A well-behaved device: polls at the interval, adds 5 s on slow_down (§3.5), and stops at
 * anything but authorization_pending. Records every error it saw.
 */
async function pollUntilDone(target: TestServer, clientId: string, deviceCode: string, interval: number, deadlineMs = 45_000) {
  const seen: string[] = [];
  const end = Date.now() + deadlineMs;
  while (Date.now() < end) {
    await sleep(interval * 1000 + 100);
    const res = await poll(target, clientId, deviceCode);
    if (res.status === 200) return { res, seen };
    seen.push(res.json?.error);
    if (res.json?.error === "slow_down") interval += 5;
    else if (res.json?.error !== "authorization_pending") return { res, seen };
  }
  throw new Error(`device never finished: ${seen.join(", ")}`);
}

describe("device authorization endpoint", () => {
  it("is advertised in discovery, with the grant type, and answers there", async () => {
    for (const path of ["/.well-known/openid-configuration", "/.well-known/oauth-authorization-server"]) {
      const meta = (await server.api(path)).json;
      expect(meta.device_authorization_endpoint).toBe(`${server.url}/api/auth/device/code`);
      expect(meta.grant_types_supported).toContain(DEVICE_GRANT);
    }
    const client = await deviceClient();
    const res = await requestCode(server, client.client_id);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.json).toMatchObject({ verification_uri: `${server.url}/device`, expires_in: 600, interval: POLL_INTERVAL });
    expect(typeof res.json.device_code).toBe("string");
    // Short and unambiguous: 8 characters grouped 4-4, no 0/O/1/I.
    expect(res.json.user_code).toMatch(/^[A-HJ-NP-Z2-9]{4}-[A-HJ-NP-Z2-9]{4}$/);
    const complete = new URL(res.json.verification_uri_complete);
    expect(complete.origin + complete.pathname).toBe(`${server.url}/device`);
    expect(complete.searchParams.get("user_code")!.replace(/-/g, "")).toBe(res.json.user_code.replace("-", ""));
  });

  it("is open to clients registered for the grant only", async () => {
    const codeOnly = await registerClient(server);
    const res = await requestCode(server, codeOnly.client_id);
    expect(res.status).toBe(400);
    expect(res.json.error).toBe("unauthorized_client");
    const unknown = await requestCode(server, "no-such-client");
    expect(unknown.status).toBe(400);
    expect(unknown.json.error).toBe("invalid_client");
  });
});

describe("a person approving in the browser while the device polls", () => {
  it("signs in, confirms the prefilled code, approves, and the device gets its tokens", async () => {
    const person = await signUp(server, { name: "Device Owner" });
    const client = await deviceClient();
    const code = await requestCode(server, client.client_id);
    // The device asks at once: nobody has approved yet. Then it keeps polling at the interval
    // while the person signs in and approves.
    const first = await poll(server, client.client_id, code.json.device_code);
    expect(first.status).toBe(400);
    expect(first.json.error).toBe("authorization_pending");
    const polling = pollUntilDone(server, client.client_id, code.json.device_code, code.json.interval);

    const page = await browser.page();
    await page.goto(code.json.verification_uri_complete);
    // Not signed in: the sign-in page, which comes back here afterwards.
    await signInThroughPage(page, person);

    expect(new URL(page.url()).pathname).toBe("/device");
    await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe("Connect Living Room TV?");
    await expect(page.locator("#device-code").textContent()).resolves.toBe(code.json.user_code);
    await expect(page.locator("ul.scopes").textContent()).resolves.toMatch(/e-mail address/);
    await submitWith(page, "Approve");
    await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe("Device connected");

    const { res, seen } = await polling;
    // Polling at the interval never earns slow_down; before approval it is only ever pending.
    expect(seen.filter((error) => error !== "authorization_pending")).toEqual([]);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toMatch(/no-store/);
    expect(res.json).toMatchObject({ token_type: "Bearer" });
    expect(typeof res.json.access_token).toBe("string");
    expect(typeof res.json.id_token).toBe("string");
    const claims = JSON.parse(Buffer.from(res.json.id_token.split(".")[1], "base64url").toString("utf8"));
    expect(claims).toMatchObject({ sub: person.user.id, aud: client.client_id, iss: server.url });

    // The access token is a real one: userinfo answers for the person.
    const userinfo = await server.api("/api/auth/oauth2/userinfo", { headers: { authorization: `Bearer ${res.json.access_token}` } });
    expect(userinfo.status).toBe(200);
    expect(userinfo.json).toMatchObject({ sub: person.user.id, email: person.email });
    // A device code is single use.
    await sleep(POLL_INTERVAL * 1000 + 100);
    expect((await poll(server, client.client_id, code.json.device_code)).json.error).toBe("invalid_grant");
  });

  it("takes a typed code in any case, with or without its dash", async () => {
    const person = await signUp(server);
    const client = await deviceClient();
    const code = await requestCode(server, client.client_id);
    const typed = code.json.user_code.replace("-", " ").toLowerCase();
    const page = await server.api(`/device?${new URLSearchParams({ user_code: typed })}`, { cookie: person.cookie });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    expect(page.text).toContain(code.json.user_code);
    expect(page.text).toContain("Living Room TV");
  });
});

describe("the device's other endings (RFC 8628 §3.5)", () => {
  it("answers access_denied once the person denies, then forgets the code", async () => {
    const person = await signUp(server);
    const client = await deviceClient();
    const code = await requestCode(server, client.client_id);
    const confirm = await server.api(`/device?user_code=${code.json.user_code}`, { cookie: person.cookie });
    expect(confirm.status).toBe(200);
    const denied = await server.api("/device", {
      cookie: person.cookie,
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ user_code: code.json.user_code, decision: "deny" }).toString(),
    });
    expect(denied.status).toBe(200);
    expect(denied.text).toContain("Request denied");

    const res = await poll(server, client.client_id, code.json.device_code);
    expect(res.status).toBe(400);
    expect(res.json.error).toBe("access_denied");
    await sleep(POLL_INTERVAL * 1000 + 100);
    expect((await poll(server, client.client_id, code.json.device_code)).json.error).toBe("invalid_grant");
  });

  it("answers slow_down to a device polling faster than the interval", async () => {
    const client = await deviceClient();
    const code = await requestCode(server, client.client_id);
    const first = await poll(server, client.client_id, code.json.device_code);
    expect(first.status).toBe(400);
    expect(first.json.error).toBe("authorization_pending");
    const second = await poll(server, client.client_id, code.json.device_code);
    expect(second.status).toBe(400);
    expect(second.json.error).toBe("slow_down");
    // Waiting the interval out is enough to be answered normally again.
    await sleep(POLL_INTERVAL * 1000 + 100);
    expect((await poll(server, client.client_id, code.json.device_code)).json.error).toBe("authorization_pending");
  });

  it("refuses another client's device code, and one bound to another person", async () => {
    const [owner, other] = [await signUp(server), await signUp(server)];
    const client = await deviceClient();
    const thief = await deviceClient();
    const code = await requestCode(server, client.client_id);
    expect((await poll(server, thief.client_id, code.json.device_code)).json.error).toBe("invalid_grant");
    // The first signed-in person to open the code owns it; a second one cannot approve it.
    expect((await server.api(`/device?user_code=${code.json.user_code}`, { cookie: owner.cookie })).status).toBe(200);
    const hijack = await server.api("/device", {
      cookie: other.cookie,
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ user_code: code.json.user_code, decision: "approve" }).toString(),
    });
    expect(hijack.status).toBe(400);
    expect(hijack.text).not.toContain("Device connected");
  });
});

describe("answers sent together (approve and deny racing, two tabs, a double click)", () => {
  /**
   * On PostgreSQL the race is made certain, not just likely: a transaction of the test holds
   * the device code's row lock, so the answers read `pending` and then queue at their write
   * until it ends. (SQLite runs one write at a time: there the answers simply race.)
   */
  async function holdingTheRow<T>(userCode: string, race: () => Promise<T>): Promise<T> {
    if (server.dbType !== "postgres") return race();
    const [locker, watcher] = [new pg.Client({ connectionString: process.env.TEST_DATABASE_URL }), new pg.Client({ connectionString: process.env.TEST_DATABASE_URL })];
    await Promise.all([locker.connect(), watcher.connect()]);
    try {
      await locker.query("BEGIN");
      await locker.query(`SELECT 1 FROM "deviceCode" WHERE "userCode" = $1 FOR UPDATE`, [userCode]);
      const racing = race();
      // Asked outside any transaction: PostgreSQL keeps one snapshot of pg_stat_activity per transaction.
      const waiting = async () =>
        (await watcher.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`)).rows[0].n as number;
      // Until every connection of the server's pool (10) waits at a write, or 10 s have passed.
      let queued = 0;
      for (let i = 0; i < 400 && queued < 10; i++) {
        await new Promise((r) => setTimeout(r, 25));
        queued = await waiting();
      }
      expect(queued, "answers waiting at their write together").toBeGreaterThanOrEqual(2);
      await locker.query("COMMIT");
      return await racing;
    } finally {
      await Promise.all([locker.end(), watcher.end()]);
    }
  }

  it("decides the code once: of 20 parallel approve and deny answers exactly one succeeds, and the device gets what it said", async () => {
    const person = await signUp(server);
    const client = await deviceClient();
    const code = await requestCode(server, client.client_id);
    const userCode = code.json.user_code.replace("-", "");
    // The person opens the code first: it is now bound to them (the verify step).
    expect((await server.api(`/api/auth/device?user_code=${userCode}`, { cookie: person.cookie })).status).toBe(200);

    const answers = Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? "approve" : "deny"));
    const results = await holdingTheRow(userCode, () => Promise.all(answers.map((answer) => server.api(`/api/auth/device/${answer}`, { cookie: person.cookie, body: { userCode } }))));
    const won = results.flatMap((res, i) => (res.status === 200 ? [answers[i]!] : []));
    expect(won, results.map((r) => `${r.status} ${r.text}`).join("\n")).toHaveLength(1);
    for (const res of results.filter((r) => r.status !== 200)) {
      expect(res.status).toBe(400);
      expect(res.json).toEqual({ error: "invalid_request", error_description: "Device code already processed" });
    }

    // A late answer on the page says the code was used, and changes nothing.
    const late = await server.api("/device", {
      cookie: person.cookie,
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ user_code: code.json.user_code, decision: won[0] === "approve" ? "deny" : "approve" }).toString(),
    });
    expect(late.status).toBe(400);
    expect(late.text).toMatch(/already used/);

    // The stored decision and the device's answer are the one that won.
    const row = await server.db.selectFrom("deviceCode").select("status").where("userCode", "=", userCode).executeTakeFirstOrThrow();
    expect(row.status).toBe(won[0] === "approve" ? "approved" : "denied");
    const polled = await poll(server, client.client_id, code.json.device_code);
    if (won[0] === "approve") expect(polled.status, polled.text).toBe(200);
    else expect(polled.json.error).toBe("access_denied");
  });
});

describe("refresh tokens", () => {
  /** The person opens the code on our /device page (which makes it theirs) and approves it. */
  async function approve(cookie: string, userCode: string) {
    expect((await server.api(`/device?user_code=${userCode}`, { cookie })).status).toBe(200);
    const approved = await server.api("/device", {
      cookie,
      headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" },
      body: new URLSearchParams({ user_code: userCode, decision: "approve" }).toString(),
    });
    expect(approved.text).toContain("Device connected");
  }

  it("come with offline_access only to a client registered for the refresh_token grant", async () => {
    const person = await signUp(server);
    const withRefresh = await deviceClient(server, [DEVICE_GRANT, "refresh_token"]);
    // Registered for authorization_code too, which once implied refresh tokens.
    const without = await registerClient(server, { client_name: "Living Room TV", grant_types: ["authorization_code", DEVICE_GRANT], response_types: ["code"] });
    const issued: Record<string, any>[] = [];
    for (const client of [withRefresh, without]) {
      const code = await requestCode(server, client.client_id, "openid offline_access");
      await approve(person.cookie, code.json.user_code);
      const res = await poll(server, client.client_id, code.json.device_code);
      expect(res.status, res.text).toBe(200);
      issued.push(res.json);
    }
    expect(issued[0]).toMatchObject({ scope: "openid offline_access", refresh_token: expect.any(String) });
    const refreshed = await token(server, { grant_type: "refresh_token", refresh_token: issued[0]!.refresh_token, client_id: withRefresh.client_id });
    expect(refreshed.status, refreshed.text).toBe(200);
    expect(issued[1]).not.toHaveProperty("refresh_token");
  });
});

describe("expiry", () => {
  const short = useTestServer({ DEVICE_CODE_TTL: "1", DEVICE_POLL_INTERVAL: "1" });

  it("answers expired_token once the code's lifetime has passed, and the page says so", async () => {
    const person = await signUp(short);
    const client = await deviceClient(short);
    const code = await requestCode(short, client.client_id);
    expect(code.json.expires_in).toBe(1);
    await sleep(1500);
    const page = await short.api(`/device?user_code=${code.json.user_code}`, { cookie: person.cookie });
    expect(page.status).toBe(400);
    expect(page.text).toMatch(/expired/i);
    const res = await poll(short, client.client_id, code.json.device_code);
    expect(res.status).toBe(400);
    expect(res.json.error).toBe("expired_token");
  });
});

describe("guessing user codes", () => {
  // DEVICE_CODE_RATE_LIMIT left at its default: 10 checks a minute per IP.
  const limited = useTestServer({ RATE_LIMIT_ENABLED: "true", TRUST_PROXY: "true" });

  async function guesser(headers: Record<string, string>) {
    const signUpRes = await limited.api("/api/auth/sign-up/email", { headers, body: { name: "Guesser", email: `guesser-${Date.now()}-${Math.random()}@example.com`, password: "correct horse battery staple" } });
    return cookiesOf(signUpRes.headers);
  }

  it("allows 10 guesses a minute per IP across the page and the verify, approve and deny endpoints together", async () => {
    const headers = { "x-forwarded-for": uniqueClientIp() };
    const cookie = await guesser(headers);
    const codes = ["ABCD-EFGH", "BCDE-FGHJ", "CDEF-GHJK", "DEFG-HJKM", "EFGH-JKMN", "FGHJ-KMNP", "GHJK-MNPQ", "HJKM-NPQR", "JKMN-PQRS", "KMNP-QRST"];
    const guesses = [
      () => limited.api(`/device?user_code=${codes[0]}`, { cookie, headers }),
      () => limited.api(`/device?user_code=${codes[1]}`, { cookie, headers }),
      () => limited.api(`/device?user_code=${codes[2]}`, { cookie, headers }),
      () => limited.api(`/api/auth/device?user_code=${codes[3]!.replace("-", "")}`, { cookie, headers }),
      () => limited.api(`/api/auth/device?user_code=${codes[4]!.replace("-", "")}`, { cookie, headers }),
      () => limited.api("/api/auth/device/approve", { cookie, headers, body: { userCode: codes[5]!.replace("-", "") } }),
      () => limited.api("/api/auth/device/approve", { cookie, headers, body: { userCode: codes[6]!.replace("-", "") } }),
      () => limited.api("/api/auth/device/deny", { cookie, headers, body: { userCode: codes[7]!.replace("-", "") } }),
      () => limited.api("/api/auth/device/deny", { cookie, headers, body: { userCode: codes[8]!.replace("-", "") } }),
      () => limited.api("/device", { cookie, headers: { ...headers, "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" }, body: new URLSearchParams({ user_code: codes[9]!, decision: "approve" }).toString() }),
    ];
    const statuses: number[] = [];
    for (const guess of guesses) statuses.push((await guess()).status);
    expect(statuses.every((s) => s === 400 || s === 404), String(statuses)).toBe(true);

    // The eleventh check is refused on every route, whichever ones the first ten used.
    const page = await limited.api("/device?user_code=LMNP-RSTU", { cookie, headers });
    expect(page.status).toBe(429);
    expect(page.text).toMatch(/too many attempts/i);
    for (const res of [
      await limited.api("/api/auth/device?user_code=LMNPRSTU", { cookie, headers }),
      await limited.api("/api/auth/device/approve", { cookie, headers, body: { userCode: "LMNPRSTU" } }),
      await limited.api("/api/auth/device/deny", { cookie, headers, body: { userCode: "LMNPRSTU" } }),
    ]) {
      expect(res.status).toBe(429);
      expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    }

    // Another address is not affected.
    const elsewhere = { "x-forwarded-for": uniqueClientIp() };
    expect((await limited.api("/device?user_code=FGHJ-KMNP", { cookie, headers: elsewhere })).status).toBe(400);
  });
});
