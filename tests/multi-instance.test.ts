import { PrivateKey } from "@bsv/sdk";
import { getAuthToken } from "bitcoin-auth";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authorize, pkce, REDIRECT, registerClient, signUp } from "./helpers/oauth.js";
import { startTestServer, uniqueClientIp, type TestServer } from "./helpers/server.js";

/**
 * Two instances of one deployment (same database, same Redis): a session made on one
 * works on the other, a Bitcoin-Auth token spent on one is refused by the other, and the
 * rate-limit counters are shared.
 */
const redisUrl = process.env.TEST_REDIS_URL;
describe.runIf(Boolean(redisUrl))("several instances sharing Redis", () => {
  let a: TestServer;
  let b: TestServer;
  beforeAll(async () => {
    a = await startTestServer({ REDIS_URL: redisUrl! });
    const database = a.config.database;
    b = await startTestServer({ REDIS_URL: redisUrl!, DATABASE_URL: database.kind === "sqlite" ? database.file : database.url });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it("a session made on one instance is valid on the other, and signing out ends it on both", async () => {
    const person = await signUp(a);
    const onB = await b.api("/api/auth/get-session", { cookie: person.cookie });
    expect(onB.json?.user?.id).toBe(person.user.id);
    const out = await b.api("/api/auth/sign-out", { cookie: person.cookie, body: {} });
    expect(out.status).toBe(200);
    expect((await a.api("/api/auth/get-session", { cookie: person.cookie })).json).toBeNull();
  });

  it("a Bitcoin-Auth token used on one instance is refused on the other", async () => {
    const key = PrivateKey.fromRandom();
    const person = await signUp(a);
    const client = await registerClient(a, { member_pubkey: key.toPublicKey().toString() });
    const { verifier, challenge } = pkce();
    const { code } = await authorize(a, { clientId: client.client_id, cookie: person.cookie, challenge });
    const body = new URLSearchParams({ grant_type: "authorization_code", code: code!, redirect_uri: REDIRECT, client_id: client.client_id, code_verifier: verifier }).toString();
    const authToken = getAuthToken({ privateKeyWif: key.toWif(), requestPath: "/api/auth/oauth2/token", body });
    const post = (server: TestServer) =>
      fetch(`${server.url}/api/auth/oauth2/token`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", "x-auth-token": authToken }, body });
    expect((await post(a)).status).toBe(200);
    const replay = await post(b);
    expect(replay.status).toBe(401);
    expect((await replay.json()).error).toBe("invalid_client");
  });

  it("shares rate-limit counters between instances", async () => {
    const limits = { RATE_LIMIT_ENABLED: "true", REGISTER_RATE_LIMIT: "2", TRUST_PROXY: "true" };
    const database = a.config.database;
    const dbUrl = database.kind === "sqlite" ? database.file : database.url;
    const c = await startTestServer({ REDIS_URL: redisUrl!, DATABASE_URL: dbUrl, ...limits });
    const d = await startTestServer({ REDIS_URL: redisUrl!, DATABASE_URL: dbUrl, ...limits });
    try {
      // Distinct client address for this test only, so other runs' counters cannot interfere.
      const ip = uniqueClientIp();
      const reg = (server: TestServer) =>
        server.api("/api/auth/oauth2/register", { body: { client_name: "rl", redirect_uris: ["https://a.example/cb"] }, headers: { "x-forwarded-for": ip } });
      const statuses = [(await reg(c)).status, (await reg(d)).status, (await reg(c)).status, (await reg(d)).status];
      expect(statuses.slice(0, 2)).toEqual([201, 201]);
      expect(statuses.slice(2)).toEqual([429, 429]);
    } finally {
      await c.close();
      await d.close();
    }
  });
});
