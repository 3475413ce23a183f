import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentKit, ed25519 } from "../helpers/agents.js";
import { enrolKey, keySignIn, newIdentity } from "../helpers/bap.js";
import { useTestServer } from "../helpers/fixtures.js";
import { authorize, fullCodeFlow, pkce, REDIRECT, registerClient, signUp } from "../helpers/oauth.js";
import { freePort, postForm, startTestServer, uniqueClientIp, type TestServer } from "../helpers/server.js";

/**
 * The limits of lib/limits.ts with the shipped defaults: machine traffic is limited per client,
 * token or key and never per address, people's unauthenticated surfaces per address, and a
 * caller failing to authenticate as a client spends its own address's budget, not the client's.
 */

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

/** A confidential client (client_secret_basic) and an access and refresh token issued to it. */
async function confidentialGrant(server: TestServer) {
  const person = await signUp(server);
  const client = await registerClient(server, { token_endpoint_auth_method: "client_secret_basic" });
  const { verifier, challenge } = pkce();
  const { code } = await authorize(server, { clientId: client.client_id, cookie: person.cookie, challenge });
  const authorization = basic(client.client_id, client.client_secret!);
  const tokens = await postForm(server, "/api/auth/oauth2/token", { grant_type: "authorization_code", code: code!, redirect_uri: REDIRECT, code_verifier: verifier }, { authorization });
  expect(tokens.status, tokens.text).toBe(200);
  return { client, authorization, accessToken: tokens.json.access_token as string };
}

/** Runs `send` `perSecond` times a second for `seconds`, evenly spaced, and returns every status. */
async function paced(perSecond: number, seconds: number, send: () => Promise<number>) {
  const started = Date.now();
  const pending: Promise<number>[] = [];
  for (let i = 0; i < perSecond * seconds; i++) {
    await sleep(started + (i * 1000) / perSecond - Date.now());
    pending.push(send());
  }
  const statuses = await Promise.all(pending);
  return { statuses, elapsed: Date.now() - started };
}

const countOf = (statuses: number[]) => statuses.reduce<Record<number, number>>((n, s) => ({ ...n, [s]: (n[s] ?? 0) + 1 }), {});

describe("limits with the shipped defaults", () => {
  // Only TRUST_PROXY, so each test can speak from an address of its own (X-Forwarded-For).
  const server = useTestServer({ RATE_LIMIT_ENABLED: "true", TRUST_PROXY: "true" });

  it("answers 100 introspections a second from one address for 10 s without a 429", { timeout: 60_000 }, async () => {
    const { authorization, accessToken } = await confidentialGrant(server);
    const ip = uniqueClientIp();
    const introspect = async () => {
      const res = await fetch(`${server.url}/api/auth/oauth2/introspect`, {
        method: "POST",
        headers: { authorization, "content-type": "application/x-www-form-urlencoded", "x-forwarded-for": ip },
        body: new URLSearchParams({ token: accessToken, token_type_hint: "access_token" }),
      });
      const body = (await res.json()) as { active?: boolean };
      return res.status === 200 && body.active === true ? 200 : res.status;
    };
    const { statuses, elapsed } = await paced(100, 10, introspect);
    expect(elapsed).toBeGreaterThanOrEqual(9_900);
    expect(countOf(statuses)).toEqual({ 200: 1000 });
  });

  it("serves a refresh-token loop from one address for 10 s without a 429", { timeout: 60_000 }, async () => {
    const { client, tokens } = await fullCodeFlow(server);
    const ip = uniqueClientIp();
    let refreshToken = tokens.json.refresh_token as string;
    const statuses: number[] = [];
    const until = Date.now() + 10_000;
    // One chain, as fast as the server answers: each answer's rotated token is the next request's.
    while (Date.now() < until) {
      const res = await postForm(server, "/api/auth/oauth2/token", { grant_type: "refresh_token", refresh_token: refreshToken, client_id: client.client_id }, { "x-forwarded-for": ip });
      statuses.push(res.status);
      if (res.status !== 200) break;
      refreshToken = res.json.refresh_token;
    }
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    // better-auth's default rule for /oauth2/token allowed 20 a minute per address.
    expect(statuses.length).toBeGreaterThan(100);
  });

  it("still stops password guessing: the 21st sign-in a minute from one address is a 429 with Retry-After", { timeout: 60_000 }, async () => {
    const ip = uniqueClientIp();
    const attempt = () => server.api("/api/auth/sign-in/email", { body: { email: "nobody@example.com", password: "guess guess guess" }, headers: { "x-forwarded-for": ip } });
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) statuses.push((await attempt()).status);
    expect(statuses).not.toContain(429);
    const refused = await attempt();
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(refused.json).toEqual({ message: "Too many requests. Please try again later." });
    // Another address is not held back by that one.
    expect((await server.api("/api/auth/sign-in/email", { body: { email: "nobody@example.com", password: "guess" }, headers: { "x-forwarded-for": uniqueClientIp() } })).status).not.toBe(429);
  });

  it("lets many keys sign in from one address, and stops one key signing in too often", { timeout: 90_000 }, async () => {
    const ip = uniqueClientIp();
    const fromFleet = { ...server, api: (path: string, init: Parameters<TestServer["api"]>[1] = {}) => server.api(path, { ...init, headers: { ...init.headers, "x-forwarded-for": ip } }) };
    // 25 agents behind one NAT: each enrols and signs in (better-auth's /sign-in/* rule allowed 3 per 10 s per address).
    const keys = Array.from({ length: 25 }, () => newIdentity());
    const statuses: number[] = [];
    for (const id of keys) {
      statuses.push((await enrolKey(fromFleet, id)).status);
      statuses.push((await keySignIn(fromFleet, id)).status);
    }
    expect(countOf(statuses)).toEqual({ 200: 50 });
    // One key hammered: 10 a minute per key, its enrolment and first sign-in included.
    const hammered = keys[0]!;
    const more: number[] = [];
    for (let i = 0; i < 10; i++) more.push((await keySignIn(fromFleet, hammered)).status);
    expect(more.slice(0, 8)).toEqual(Array(8).fill(200));
    expect(more.slice(8)).toEqual([429, 429]);
    // ...while the other keys behind the same address go on signing in.
    expect((await keySignIn(fromFleet, keys[1]!)).status).toBe(200);
  });
});

describe("limits under an issuer with a path (AUTH_URL=http://host/idp)", () => {
  // better-auth sees its requests under AUTH_URL's path; the edge reads the endpoint below it,
  // so a client's budget holds there as at the root (2 a second here, so it is quickly met).
  const server = useTestServer(async () => {
    const port = await freePort();
    return { PORT: String(port), AUTH_URL: `http://127.0.0.1:${port}/idp`, RATE_LIMIT_ENABLED: "true", TRUST_PROXY: "true", CLIENT_RATE_LIMIT: "2" };
  });

  it("counts introspection against the client's budget, whatever address it comes from", { timeout: 30_000 }, async () => {
    const client = await registerClient(server, { token_endpoint_auth_method: "client_secret_basic" });
    const authorization = basic(client.client_id, client.client_secret!);
    const statuses: number[] = [];
    // One after another: to stay within 2 a second, ten would need five seconds. (An unknown
    // token is `active: false`, a 200 that verified the client: RFC 7662 §2.2.)
    for (let i = 0; i < 10; i++) statuses.push((await postForm(server, "/api/auth/oauth2/introspect", { token: "unknown" }, { authorization, "x-forwarded-for": uniqueClientIp() })).status);
    expect(statuses).toContain(200);
    expect(statuses).toContain(429);
    expect(countOf(statuses)[200]! + countOf(statuses)[429]!).toBe(10);
  });
});

describe("failed client authentication", () => {
  // Small budgets, so a flood is quick to send: 20 failures a minute per address, 50 requests a second per client.
  const server = useTestServer({ RATE_LIMIT_ENABLED: "true", TRUST_PROXY: "true", AUTH_FAILURE_RATE_LIMIT: "20", CLIENT_RATE_LIMIT: "50" });

  it("count against the caller's address, never against the client it names", { timeout: 60_000 }, async () => {
    const { client, authorization, accessToken } = await confidentialGrant(server);
    const introspect = (auth: string, ip: string) =>
      postForm(server, "/api/auth/oauth2/introspect", { token: accessToken }, { authorization: auth, "x-forwarded-for": ip });
    const attacker = uniqueClientIp();
    const real = uniqueClientIp();
    const wrong = basic(client.client_id, "not-the-secret");
    // The flood: 19 failures (under the address's ceiling), then the real client 40 times,
    // all within a second: had the failures counted against the client, it would pass 50.
    const flood: number[] = [];
    for (let i = 0; i < 19; i++) flood.push((await introspect(wrong, attacker)).status);
    expect(countOf(flood)).toEqual({ 401: 19 });
    const served: number[] = [];
    for (let i = 0; i < 40; i++) served.push((await introspect(authorization, real)).status);
    expect(countOf(served)).toEqual({ 200: 40 });

    // Past the ceiling the attacker's address is refused, with RFC 6749's body and Retry-After...
    expect((await introspect(wrong, attacker)).status).toBe(401);
    const refused = await introspect(wrong, attacker);
    expect(refused.status).toBe(429);
    expect(refused.json).toMatchObject({ error: "slow_down" });
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    // ...and the real client, from its own address, is still served.
    await sleep(1_100); // a new second of the client's own budget
    expect((await introspect(authorization, real)).status).toBe(200);
  });

  it("a device polling for its grant is charged to its client, not counted as failures at its address", { timeout: 30_000 }, async () => {
    const grant = "urn:ietf:params:oauth:grant-type:device_code";
    const client = await registerClient(server, { client_name: "TV", redirect_uris: undefined, application_type: undefined, grant_types: [grant], response_types: [], token_endpoint_auth_method: "none" });
    const ip = uniqueClientIp();
    const code = await postForm(server, "/api/auth/device/code", { client_id: client.client_id, scope: "openid" }, { "x-forwarded-for": ip });
    expect(code.status).toBe(200);
    // RFC 8628 §3.5: answered only for the client's own device code. 25 polls: past the address's 20 failures.
    const answers: string[] = [];
    for (let i = 0; i < 25; i++) {
      const res = await postForm(server, "/api/auth/oauth2/token", { grant_type: grant, device_code: code.json.device_code, client_id: client.client_id }, { "x-forwarded-for": ip });
      answers.push(`${res.status} ${res.json?.error}`);
    }
    expect(answers[0]).toBe("400 authorization_pending");
    expect(answers.slice(1)).toEqual(Array(24).fill("400 slow_down"));
  });

  it("a client's own budget is per client, whatever its address", { timeout: 30_000 }, async () => {
    const { authorization, accessToken } = await confidentialGrant(server);
    // One request after another, each from an address of its own: the client's 50 a second hold across them.
    const statuses: number[] = [];
    while (statuses.length < 200 && !statuses.includes(429)) {
      statuses.push((await postForm(server, "/api/auth/oauth2/introspect", { token: accessToken }, { authorization, "x-forwarded-for": uniqueClientIp() })).status);
    }
    expect(statuses.at(-1)).toBe(429);
    expect(statuses.slice(0, -1).every((s) => s === 200)).toBe(true);
    // 50 a second, one of which went to the code exchange just before.
    expect(statuses.length).toBeGreaterThanOrEqual(50);
  });
});

describe("a credential's budget pays only for answers that verified it", () => {
  // Small budgets: 3 key sign-ins a minute, 5 requests a second per client and per agent.
  const limits = { KEY_SIGN_IN_RATE_LIMIT: "3", CLIENT_RATE_LIMIT: "5", AGENT_RATE_LIMIT: "5" };
  const server = useTestServer({ RATE_LIMIT_ENABLED: "true", TRUST_PROXY: "true", ...limits });
  const kit = agentKit(() => server);
  const from = (ip: string) => ({ "x-forwarded-for": ip });

  it("keys: a forged signature over a malformed body, past the key's budget, never keeps its holder out", { timeout: 30_000 }, async () => {
    const victim = newIdentity();
    expect((await enrolKey(server, victim)).status).toBe(200);
    // Member keys are public: the token names the victim's key, its signature is made up, the body is not JSON.
    const forged = (path: string) => `${victim.pubkey}|brc77|${new Date().toISOString()}|${path}|${Buffer.alloc(65, 7).toString("base64")}`;
    const attacker = uniqueClientIp();
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      for (const path of ["/api/auth/sign-in/sigma", "/api/auth/sign-up/sigma"]) {
        statuses.push((await server.api(path, { body: "not json", headers: { ...from(attacker), "x-auth-token": forged(path) } })).status);
      }
    }
    expect((await keySignIn(server, victim)).status).toBe(200);
    expect(countOf(statuses)).toEqual({ 400: 8 });
  });

  it("clients: malformed requests naming a client, and a public client's revocations, never spend its budget", { timeout: 30_000 }, async () => {
    const { authorization, accessToken, client } = await confidentialGrant(server);
    const { client: publicClient, tokens } = await fullCodeFlow(server);
    const attacker = uniqueClientIp();
    const seen = { introspect: [] as number[], token: [] as number[], revoke: [] as number[] };
    for (let i = 0; i < 6; i++) {
      // The victim's client_id with a made-up secret and no token: 400 invalid_request before the secret is checked.
      seen.introspect.push((await postForm(server, "/api/auth/oauth2/introspect", {}, { ...from(attacker), authorization: basic(client.client_id, "made-up") })).status);
      seen.token.push((await postForm(server, "/api/auth/oauth2/token", { grant_type: "made-up", client_id: client.client_id }, from(attacker))).status);
      // RFC 7009 §2.1, §2.2: a public client sends no secret, and an unknown token still gets 200; nothing was verified.
      seen.revoke.push((await postForm(server, "/api/auth/oauth2/revoke", { token: randomUUID(), client_id: publicClient.client_id }, from(attacker))).status);
    }
    const real = uniqueClientIp();
    expect((await postForm(server, "/api/auth/oauth2/introspect", { token: accessToken }, { ...from(real), authorization })).status).toBe(200);
    const refreshed = await postForm(server, "/api/auth/oauth2/token", { grant_type: "refresh_token", refresh_token: tokens.json.refresh_token, client_id: publicClient.client_id }, from(real));
    expect(refreshed.status, refreshed.text).toBe(200);
    expect(seen.introspect).toEqual(Array(6).fill(400));
    expect(seen.token).toEqual(Array(6).fill(400));
    // The revocations are counted at the attacker's address, at the client budget: past 5 a second they are refused there.
    expect(seen.revoke.every((s) => s === 200 || s === 429)).toBe(true);
  });

  it("agents: a JWT naming an agent without its signature never spends the agent's budget", { timeout: 30_000 }, async () => {
    const owner = await signUp(server);
    const host = await kit.enrolledHost(owner.cookie);
    const victim = await kit.approvedAgent(owner.cookie, host, ["profile.read"]);
    // Another person's host, with a pending agent of its own: its JWTs are verified, but as the host's.
    const other = await signUp(server);
    const otherHost = await kit.enrolledHost(other.cookie);
    const registered = await kit.bearer("/api/auth/agent/register", await kit.hostJwt(otherHost.hostId, otherHost.hostKey, { agent_public_key: (await ed25519()).jwk }), { name: "Other", capabilities: ["profile.read"] });
    expect(registered.status).toBe(200);

    const impostor = await ed25519(); // signs as the victim agent with a key that is not its
    const forged = () => kit.agentJwt({ ...victim, key: impostor });
    const hostNamingVictim = () => kit.hostJwt(otherHost.hostId, otherHost.hostKey, { sub: victim.id });
    const attacker = uniqueClientIp();
    const send = async (path: string, jwt: string, body?: unknown) =>
      (await server.api(path, { headers: { ...from(attacker), authorization: `Bearer ${jwt}` }, ...(body === undefined ? {} : { body }) })).status;
    const jwts = await Promise.all(Array.from({ length: 6 }, async () => [await forged(), await forged(), await hostNamingVictim()] as const));
    const seen = { list: [] as number[], execute: [] as number[], status: [] as number[] };
    for (const [listing, executing, hosted] of jwts) {
      // /capability/list takes a JWT optionally: a bad one is ignored there and the list served (200).
      seen.list.push(await send("/api/auth/capability/list", listing));
      // A malformed body is refused (400) before agent-auth looks at the JWT.
      seen.execute.push(await send("/api/auth/capability/execute", executing, "{not json"));
      // The host's JWT is verified, as the host's: its 200s are the host's to pay for, not the agent's in `sub`.
      seen.status.push(await send(`/api/auth/agent/status?agent_id=${registered.json.agent_id}`, hosted));
    }
    const real = await server.api("/api/auth/agent/session", { headers: { ...from(uniqueClientIp()), authorization: `Bearer ${await kit.agentJwt(victim)}` } });
    expect(real.status, real.text).toBe(200);
    expect(seen.execute).toEqual(Array(6).fill(400));
    // The listings are counted at the attacker's address and the status reads at the other host, each at the agent
    // budget (5 a second): past it those are refused, and only those.
    expect([...seen.list, ...seen.status].every((s) => s === 200 || s === 429)).toBe(true);
  });
});

describe.runIf(process.env.TEST_REDIS_URL)("two instances on one Redis", () => {
  let c: TestServer;
  let d: TestServer;
  beforeAll(async () => {
    const env = { RATE_LIMIT_ENABLED: "true", TRUST_PROXY: "true", KEY_SIGN_IN_RATE_LIMIT: "4" };
    c = await startTestServer(env);
    const database = c.config.database;
    d = await startTestServer({ ...env, DATABASE_URL: database.kind === "sqlite" ? database.file : database.url });
  });
  afterAll(async () => {
    await c?.close();
    await d?.close();
  });

  it("share the per-key count of key sign-in", { timeout: 30_000 }, async () => {
    const id = newIdentity();
    expect((await enrolKey(c, id)).status).toBe(200);
    const statuses = [(await keySignIn(d, id)).status, (await keySignIn(c, id)).status, (await keySignIn(d, id)).status, (await keySignIn(c, id)).status];
    expect(statuses).toEqual([200, 200, 200, 429]);
  });
});

describe("sessions", () => {
  const server = useTestServer({ RATE_LIMIT_ENABLED: "true", TRUST_PROXY: "true", SESSION_IP_RATE_LIMIT: "30", ANONYMOUS_RATE_LIMIT: "40" });
  const getSession = (ip: string, init: { cookie?: string; bearer?: string }) =>
    server.api("/api/auth/get-session", { cookie: init.cookie, headers: { "x-forwarded-for": ip, ...(init.bearer ? { authorization: `Bearer ${init.bearer}` } : {}) } });

  it("a made-up session on each request does not escape the per-address limits", { timeout: 30_000 }, async () => {
    // Made-up cookies fail the signature check: anonymous, 40 a minute per address.
    const byCookie = uniqueClientIp();
    const cookies: number[] = [];
    for (let i = 0; i < 45; i++) cookies.push((await getSession(byCookie, { cookie: `better-auth.session_token=${randomUUID()}.${Buffer.alloc(32, i).toString("base64")}` })).status);
    expect(countOf(cookies)).toEqual({ 200: 40, 429: 5 });
    // Made-up bearer tokens cannot be checked before better-auth: the session ceiling, 30 a minute per address.
    const byBearer = uniqueClientIp();
    const bearers: number[] = [];
    for (let i = 0; i < 35; i++) bearers.push((await getSession(byBearer, { bearer: randomUUID() })).status);
    expect(countOf(bearers)).toEqual({ 200: 30, 429: 5 });
  });

  it("a real session cookie is counted per session, not per address", { timeout: 30_000 }, async () => {
    const person = await signUp(server);
    const ip = uniqueClientIp();
    const statuses: number[] = [];
    for (let i = 0; i < 60; i++) statuses.push((await getSession(ip, { cookie: person.cookie })).status);
    expect(countOf(statuses)).toEqual({ 200: 60 });
  });
});
