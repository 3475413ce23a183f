import { connect } from "node:net";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it, vi } from "vitest";
import { useTestServer } from "../helpers/fixtures.js";
import { sessionWithUserReader } from "../../plugins/core-store/sessions.js";
import { getSessionLaneRoute, type FastSessionContext } from "../../plugins/fast-lane/get-session.js";
import { documentLaneRoute } from "../../routes/fast-lane.js";
import { Hono } from "hono";
import SQLite from "better-sqlite3";

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

/** The lane's get-session answer for `cookie` is the app's, byte for byte (`state` names the case). */
async function expectAppBytes(route: { answer: ReturnType<typeof getSessionLaneRoute>["answer"] }, cookie: string, state: string) {
  const lane = await route.answer({ headers: { cookie }, body: "" });
  const app = await server.app.request("/api/auth/get-session", { headers: { cookie } });
  expect(lane, state).not.toBeNull();
  expect(lane!.body, state).toBe(await app.text());
}

/** The session token a signed session cookie carries. */
const tokenOfCookie = (cookie: string) => decodeURIComponent(/session_token=([^.;]+)/.exec(cookie)![1]!);

/** A new person signed up by e-mail: the session cookie, its token and the user's id. */
async function signUp(prefix: string) {
  const email = `${prefix}-${Date.now()}-${Math.random().toString(36).slice(2)}@example.com`;
  const res = await fetch(`${server.url}/api/auth/sign-up/email`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: server.url },
    body: JSON.stringify({ name: "Fast Person", email, password: "correct horse battery staple" }),
  });
  expect(res.status).toBe(200);
  const cookie = res.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
  const token = decodeURIComponent(/session_token=([^.;]+)/.exec(cookie)![1]!);
  return { cookie, token, userId: ((await res.json()) as { user: { id: string } }).user.id };
}

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

  it("a document is kept from the app's first 200; a failure or a refusal before it is asked again", async () => {
    const answers = ["throw", "503", "200", "200"];
    let asked = 0;
    const app = new Hono().get("/doc", (c) => {
      const next = answers[asked++];
      if (next === "throw") throw new Error("not yet");
      return next === "503" ? c.json({ error: "later" }, 503) : c.json({ asked }, 200, { "cache-control": "public, max-age=60" });
    }).onError((_, c) => c.text("failed", 500));
    const route = documentLaneRoute(app, "/doc");
    // A handler that threw (answered 500) and a 503: neither is kept.
    expect(await route.answer({ headers: {}, body: "" })).toBeNull();
    expect(await route.answer({ headers: {}, body: "" })).toBeNull();
    const first = await route.answer({ headers: {}, body: "" });
    expect(first).toMatchObject({ status: 200, body: JSON.stringify({ asked: 3 }), headers: { "cache-control": "public, max-age=60" } });
    // Kept: at once (no promise), and the app is not asked again.
    expect(route.answer({ headers: {}, body: "" })).toBe(first);
    expect(asked).toBe(3);
  });

  it("a request with a query string, or another method, goes to the app", async () => {
    const res = await fetch(`${server.url}/api/auth/jwks?x=1`);
    expect(res.status).toBe(200);
    const post = await fetch(`${server.url}/.well-known/openid-configuration`, { method: "POST" });
    expect(post.status).toBe(404);
  });

  it("a form cut short by its client, or longer than declared, is never answered from a partial body; the next request is", async () => {
    const { hostname, port } = new URL(server.url);
    const form = "token=abc&token_type_hint=access_token";
    // Cut short: half the declared form, then the socket is shut.
    await new Promise<void>((done, fail) => {
      const socket = connect(Number(port), hostname, () => {
        socket.end(`POST /api/auth/oauth2/introspect HTTP/1.1\r\nhost: ${hostname}\r\ncontent-type: application/x-www-form-urlencoded\r\nauthorization: Basic YTpi\r\ncontent-length: ${form.length}\r\n\r\n${form.slice(0, 10)}`);
      });
      let answer = "";
      socket.on("data", (chunk) => (answer += chunk));
      socket.on("error", fail);
      socket.on("close", () => {
        try {
          // Nothing, or the server's refusal of the incomplete request: never a 200.
          expect(answer).not.toMatch(/^HTTP\/1\.1 200/);
          done();
        } catch (err) {
          fail(err);
        }
      });
    });
    const res = await fetch(`${server.url}/api/auth/oauth2/introspect`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", authorization: `Basic ${Buffer.from("nobody:secret").toString("base64")}` },
      body: form,
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: "invalid_client" });
  });
});

describe("fast get-session", () => {
  const IGNORED_SESSION = new Set(["date", "connection", "keep-alive", "x-request-id", "content-length", "transfer-encoding"]);
  const sessionHeaders = (res: Response) => Object.fromEntries([...res.headers].filter(([name]) => !IGNORED_SESSION.has(name)));

  const signedIn = async () => (await signUp("fast")).cookie;

  it("answers a session cookie with better-auth's own answer (body and headers; the app's answer via app.request)", async () => {
    const cookie = await signedIn();
    const fast = await fetch(`${server.url}/api/auth/get-session`, { headers: { cookie } });
    const app = await server.app.request("/api/auth/get-session", { headers: { cookie } });
    expect(fast.status).toBe(200);
    const body = await fast.json();
    expect(body).toEqual(await app.json());
    expect(body.user.email).toMatch(/^fast-/);
    expect(body.session.subscriptionTier).toBe("free");
    expect(sessionHeaders(fast)).toEqual(sessionHeaders(app));
    expect(fast.headers.get("set-cookie")).toBeNull();
  });

  it("writes the app's answer byte for byte from the row: any tier, nulls, booleans, a plugin's field", async () => {
    const ctx = await server.auth.$context;
    const route = getSessionLaneRoute({ context: Promise.resolve(ctx as unknown as FastSessionContext), path: "/api/auth/get-session", database: server.database });
    await new Promise((r) => setImmediate(r));
    const cookie = await signedIn();
    const token = decodeURIComponent(/session_token=([^.;]+)/.exec(cookie)![1]!);
    const userId = (await (await fetch(`${server.url}/api/auth/get-session`, { headers: { cookie } })).json()).user.id;
    const user = (set: Record<string, unknown>) => server.db.updateTable("user").set(set).where("id", "=", userId).execute();
    const session = (set: Record<string, unknown>) => server.db.updateTable("session").set(set).where("token", "=", token).execute();
    const states: [string, () => Promise<unknown>][] = [
      ["as signed up", async () => {}],
      ["a paid tier on the user only (the session's is set)", () => user({ subscriptionTier: "plus" })],
      ["the same tier on both", () => session({ subscriptionTier: "plus" })],
      ["no tier the user could have (free)", () => user({ subscriptionTier: "not-a-tier" })],
      ["booleans, nulls and text to escape", () => user({ emailVerified: true, image: null, name: 'Quote " and \\ and ünïcode', pubkey: "02".padEnd(66, "b") })],
      ["a plugin's session field, a null address", () => session({ selectedBapId: "bap-selected", ipAddress: null, userAgent: "agent/1.0 \u2028" })],
    ];
    for (const [state, change] of states) {
      await change();
      await expectAppBytes(route, cookie, state);
    }
  });

  // From the database: with Redis (TEST_REDIS_URL) sessions are read from better-auth's copies there, which a direct update of the table does not change.
  it.skipIf(!!process.env.TEST_REDIS_URL)("a session read again unchanged answers the same bytes, each session its own, and any change is in the very next answer", async () => {
    const ctx = await server.auth.$context;
    const route = getSessionLaneRoute({ context: Promise.resolve(ctx as unknown as FastSessionContext), path: "/api/auth/get-session", database: server.database });
    await new Promise((r) => setImmediate(r));
    const first = await signUp("again");
    // A second session of the same person: the same user row, another session row.
    const second = await fetch(`${server.url}/api/auth/sign-in/email`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: server.url },
      body: JSON.stringify({ email: (await (await fetch(`${server.url}/api/auth/get-session`, { headers: { cookie: first.cookie } })).json()).user.email, password: "correct horse battery staple" }),
    });
    expect(second.status).toBe(200);
    const secondCookie = second.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
    const answer = async (cookie: string) => JSON.parse((await route.answer({ headers: { cookie }, body: "" }))!.body);
    const a = await answer(first.cookie);
    const b = await answer(secondCookie);
    expect(a.session.id).not.toBe(b.session.id);
    for (let round = 0; round < 3; round++) {
      expect(await answer(first.cookie)).toEqual(a);
      expect(await answer(secondCookie)).toEqual(b);
    }
    await server.db.updateTable("user").set({ name: "Renamed Person" }).where("id", "=", first.userId).execute();
    expect((await answer(first.cookie)).user.name).toBe("Renamed Person");
    expect((await answer(secondCookie)).user.name).toBe("Renamed Person");
    await server.db.updateTable("user").set({ subscriptionTier: "plus" }).where("id", "=", first.userId).execute();
    expect((await answer(first.cookie)).session.subscriptionTier).toBe("plus");
    await server.db.updateTable("session").set({ userAgent: "changed/1.0" }).where("token", "=", first.token).execute();
    const changed = await answer(first.cookie);
    expect(changed.session.userAgent).toBe("changed/1.0");
    expect((await answer(secondCookie)).session.userAgent).not.toBe("changed/1.0");
    await expectAppBytes(route, first.cookie, "after the changes");

    // Another process on the same file (here another connection): its commit, too, is in the
    // very next answer, and so is its sign-out.
    const file = server.database.readRowNow!("select file from pragma_database_list where name = 'main'", [])!.file as string;
    const other = new SQLite(file);
    try {
      expect(await answer(first.cookie)).toEqual(await answer(first.cookie));
      other.prepare(`update "user" set "name" = ? where "id" = ?`).run("Renamed Elsewhere", first.userId);
      expect((await answer(first.cookie)).user.name).toBe("Renamed Elsewhere");
      expect((await answer(secondCookie)).user.name).toBe("Renamed Elsewhere");
      other.prepare(`delete from "session" where "token" = ?`).run(first.token);
      expect(await route.answer({ headers: { cookie: first.cookie }, body: "" })).toBeNull();
      expect((await answer(secondCookie)).user.name).toBe("Renamed Elsewhere");
    } finally {
      other.close();
    }
    await server.db.deleteFrom("session").where("token", "=", tokenOfCookie(secondCookie)).execute();
    expect(await route.answer({ headers: { cookie: secondCookie }, body: "" })).toBeNull();
  });

  it("the current tier, a signed-out session and a made-up cookie answer as better-auth does", async () => {
    const cookie = await signedIn();
    const userId = (await (await fetch(`${server.url}/api/auth/get-session`, { headers: { cookie } })).json()).user.id;
    await server.db.updateTable("user").set({ subscriptionTier: "plus" }).where("id", "=", userId).execute();
    const tier = await fetch(`${server.url}/api/auth/get-session`, { headers: { cookie } });
    expect(await tier.json()).toEqual(await (await server.app.request("/api/auth/get-session", { headers: { cookie } })).json());

    const forged = cookie.replace(/session_token=([^.;]+)\.[^;]+/, "session_token=$1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA%3D");
    expect(await (await fetch(`${server.url}/api/auth/get-session`, { headers: { cookie: forged } })).json()).toBeNull();

    const out = await fetch(`${server.url}/api/auth/sign-out`, { method: "POST", headers: { cookie, origin: server.url, "content-type": "application/json" }, body: "{}" });
    expect(out.status).toBe(200);
    expect(await (await fetch(`${server.url}/api/auth/get-session`, { headers: { cookie } })).json()).toBeNull();
  });

  it("reads a session in one statement exactly as better-auth's findSession does, every field of every plugin", async () => {
    const cookie = await signedIn();
    const token = decodeURIComponent(/session_token=([^.;]+)/.exec(cookie)![1]!);
    const userId = (await (await fetch(`${server.url}/api/auth/get-session`, { headers: { cookie } })).json()).user.id;
    // Values of every kind: a boolean set true, a date, a nullable text, a plugin's field.
    await server.db.updateTable("user").set({ subscriptionTier: "pro", emailVerified: true, banned: false, pubkey: "02".padEnd(66, "a") }).where("id", "=", userId).execute();
    await server.db.updateTable("session").set({ selectedBapId: "bap-selected", ipAddress: null }).where("token", "=", token).execute();
    const ctx = await server.auth.$context;
    const read = sessionWithUserReader(server.database, { session: ctx.tables.session!, user: ctx.tables.user! });
    expect(read).not.toBeNull();
    const ours = await read!(token);
    // better-auth's adapter decoding the same rows (what findSession does without secondary storage)...
    const session = await ctx.adapter.findOne<Record<string, unknown>>({ model: "session", where: [{ field: "token", value: token }] });
    const user = await ctx.adapter.findOne<Record<string, unknown>>({ model: "user", where: [{ field: "id", value: userId }] });
    expect(ours).toStrictEqual({ session, user });
    // ...and findSession itself, where it reads the database (with Redis it reads its own copy).
    if (!ctx.options.secondaryStorage) expect(ours).toStrictEqual(await ctx.internalAdapter.findSession(token));
    expect(ours!.user.emailVerified).toBe(true);
    expect(ours!.session.expiresAt).toBeInstanceOf(Date);
    expect(await read!("no-such-token")).toBeNull();
  });
});

/**
 * With Redis (the PostgreSQL + Redis pass), sessions are read from better-auth's copies there
 * (plugins/fast-lane/stored-sessions.ts) instead of through findSession: the same bytes as the
 * app's answer, and a revocation seen as better-auth sees it, by its mark.
 */
describe.skipIf(!process.env.TEST_REDIS_URL)("fast get-session with Redis", () => {
  const redis = lateRedis();

  function lateRedis() {
    let client: Redis | undefined;
    afterAll(() => client?.disconnect());
    return () => (client ??= new Redis(process.env.TEST_REDIS_URL!));
  }

  const signedIn = () => signUp("stored");

  async function laneRoute() {
    const route = getSessionLaneRoute({ context: server.auth.$context as unknown as Promise<FastSessionContext>, path: "/api/auth/get-session", redis: redis() });
    await server.auth.$context;
    await new Promise((r) => setImmediate(r));
    return route;
  }

  it("answers from the copy with the app's bytes, whatever strings it holds (dates without milliseconds, nested values)", async () => {
    const route = await laneRoute();
    const { cookie, token } = await signedIn();
    const key = `idp:${token}`;
    const copy = JSON.parse((await redis().get(key))!);
    const states: [string, (c: { session: Record<string, unknown>; user: Record<string, unknown> }) => void][] = [
      ["as signed up", () => {}],
      ["a date-like name without milliseconds, one with a tenth", (c) => Object.assign(c.user, { name: "2024-01-01T00:00:00Z", image: "2024-01-01T00:00:00.5Z" })],
      ["text that only looks like a date, escapes, a nested value", (c) => Object.assign(c.user, { name: "2024-13-45T99:99:99Z \" \\ \u2028", pubkey: null }, { extra: { at: "2025-02-03T04:05:06Z", list: ["2025-02-03T04:05:06.7Z", 1, true] } })],
      ["a paid tier on the user only", (c) => Object.assign(c.user, { subscriptionTier: "plus" })],
    ];
    for (const [state, change] of states) {
      change(copy);
      await redis().set(key, JSON.stringify(copy), "KEEPTTL");
      await expectAppBytes(route, cookie, state);
    }
  });

  it("a copy read again unchanged answers the same bytes; a changed copy, a mark or the session's expiry is in the very next answer", async () => {
    const route = await laneRoute();
    const { cookie, token, userId } = await signedIn();
    const key = `idp:${token}`;
    const answer = () => route.answer({ headers: { cookie }, body: "" });
    // The first read learns the token's user; from the second on the mark comes with the copy.
    for (let i = 0; i < 4; i++) await expectAppBytes(route, cookie, `read ${i + 1}`);
    const copy = JSON.parse((await redis().get(key))!);
    copy.user.name = "Renamed In The Copy";
    await redis().set(key, JSON.stringify(copy), "KEEPTTL");
    expect(JSON.parse((await answer())!.body).user.name).toBe("Renamed In The Copy");
    await expectAppBytes(route, cookie, "the changed copy, read again");
    // Past the session's expiry, the same copy and mark answer nothing (the app then answers).
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      vi.setSystemTime(Date.parse(copy.session.expiresAt) + 1000);
      expect(await answer()).toBeNull();
    } finally {
      vi.useRealTimers();
    }
    expect((await answer())?.status).toBe(200);
    // A revocation mark beside an unchanged copy.
    await redis().set(`idp:revoked-sessions-before-${userId}`, String(Date.now() + 1000), "EX", 600);
    expect(await answer()).toBeNull();
    await redis().del(`idp:revoked-sessions-before-${userId}`);
    expect((await answer())?.status).toBe(200);
    await redis().del(key);
    expect(await answer()).toBeNull();
  });

  it("a copy left behind by a revocation is refused, by better-auth's mark under the name it uses, whether the token's user was known or not", async () => {
    const warm = await laneRoute();
    const { cookie, token, userId } = await signedIn();
    // Twice: the second read has the user's mark in the same command as the copy.
    expect((await warm.answer({ headers: { cookie }, body: "" }))?.status).toBe(200);
    expect((await warm.answer({ headers: { cookie }, body: "" }))?.status).toBe(200);
    const key = `idp:${token}`;
    const copy = await redis().get(key);
    expect(copy).not.toBeNull();

    // Signed out everywhere, as a person does it (better-auth's /revoke-sessions).
    const out = await fetch(`${server.url}/api/auth/revoke-sessions`, { method: "POST", headers: { cookie, origin: server.url, "content-type": "application/json" }, body: "{}" });
    expect(out.status).toBe(200);
    let mark: string | null = null;
    for (let i = 0; i < 50 && mark === null; i++) {
      mark = await redis().get(`idp:revoked-sessions-before-${userId}`);
      if (mark === null) await new Promise((r) => setTimeout(r, 20));
    }
    // better-auth's name for the mark: when it changes, this fails rather than a revoked session passing.
    expect(Number(mark)).toBeGreaterThan(0);
    expect(await redis().get(key)).toBeNull();

    // The copy back, as a late write from another instance could leave it.
    await redis().set(key, copy!, "EX", 600);
    expect(await warm.answer({ headers: { cookie }, body: "" })).toBeNull();
    expect(await (await laneRoute()).answer({ headers: { cookie }, body: "" })).toBeNull();
    expect(await (await server.app.request("/api/auth/get-session", { headers: { cookie } })).json()).toBeNull();
    expect(await (await fetch(`${server.url}/api/auth/get-session`, { headers: { cookie } })).json()).toBeNull();
  });
});
