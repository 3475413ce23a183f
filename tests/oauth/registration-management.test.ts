import { describe, expect, it } from "vitest";
import { clientUseRecorder, expireUnusedAnonymousClients } from "../../plugins/registration-management/store.js";
import { redirectUriProblem } from "../../plugins/registration-management/metadata.js";
import { useTestServer } from "../helpers/fixtures.js";
import { authorize, pkce, REDIRECT, registerClient, signUp, token } from "../helpers/oauth.js";
import type { TestServer } from "../helpers/server.js";

const server = useTestServer();
const REGISTER = "/api/auth/oauth2/register";

type Registered = { client_id: string; client_secret?: string; registration_client_uri: string; registration_access_token: string; [k: string]: unknown };

function manage(target: TestServer, uri: string, accessToken: string | null, init: { method?: string; body?: unknown } = {}) {
  const path = new URL(uri).pathname;
  return target.api(path, { method: init.method ?? "GET", ...(init.body !== undefined ? { body: init.body } : {}), headers: accessToken ? { authorization: `Bearer ${accessToken}` } : {} });
}

function expectInvalidToken(res: { status: number; headers: Headers; json: any }) {
  expect(res.status).toBe(401);
  expect(res.json).toMatchObject({ error: "invalid_token", error_description: expect.any(String) });
  expect(res.headers.get("www-authenticate")).toMatch(/^Bearer error="invalid_token"/);
}

const webClient = { client_name: "Managed App", redirect_uris: ["https://app.example/cb"], token_endpoint_auth_method: "client_secret_basic", grant_types: ["authorization_code", "refresh_token"], response_types: ["code"] };

describe("RFC 7592 registration management", () => {
  it("answers the management URI and token on registration, reads the client, and rotates the token on each read", async () => {
    const client = (await registerClient(server, webClient)) as Registered;
    expect(client.registration_client_uri).toBe(`${server.url}${REGISTER}/${client.client_id}`);
    expect(client.registration_access_token).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const read = await manage(server, client.registration_client_uri, client.registration_access_token);
    expect(read.status).toBe(200);
    expect(read.headers.get("cache-control")).toBe("no-store");
    expect(read.json).toMatchObject({ client_id: client.client_id, client_name: "Managed App", redirect_uris: ["https://app.example/cb"], token_endpoint_auth_method: "client_secret_basic", client_secret_expires_at: 0, registration_client_uri: client.registration_client_uri });
    expect(read.json.client_secret).toBeUndefined();
    expect(read.json.registration_access_token).not.toBe(client.registration_access_token);

    expectInvalidToken(await manage(server, client.registration_client_uri, client.registration_access_token));
    expect((await manage(server, client.registration_client_uri, read.json.registration_access_token)).status).toBe(200);
  });

  it("refuses a missing token, another client's token, and an unknown client alike", async () => {
    const a = (await registerClient(server, webClient)) as Registered;
    const b = (await registerClient(server, webClient)) as Registered;
    expectInvalidToken(await manage(server, a.registration_client_uri, null));
    expectInvalidToken(await manage(server, a.registration_client_uri, b.registration_access_token));
    expectInvalidToken(await manage(server, `${server.url}${REGISTER}/no-such-client`, a.registration_access_token));
    expectInvalidToken(await manage(server, a.registration_client_uri, "not a token"));
  });

  it("replaces the metadata with PUT, and the new redirect URI is the one enforced", async () => {
    const client = (await registerClient(server)) as Registered;
    const next = "http://127.0.0.1:9998/new-callback";
    const body = { client_id: client.client_id, client_name: "Renamed", redirect_uris: [next], token_endpoint_auth_method: "none", application_type: "native", grant_types: ["refresh_token", "authorization_code"] };
    const put = await manage(server, client.registration_client_uri, client.registration_access_token, { method: "PUT", body });
    expect(put.status).toBe(200);
    expect(put.json).toMatchObject({ client_id: client.client_id, client_name: "Renamed", redirect_uris: [next] });
    // Omitted display members are cleared (RFC 7592 §2.2); the client name was replaced.
    const read = await manage(server, client.registration_client_uri, put.json.registration_access_token);
    expect(read.json.client_name).toBe("Renamed");

    const person = await signUp(server);
    const { challenge } = pkce();
    const moved = await authorize(server, { clientId: client.client_id, cookie: person.cookie, challenge, redirectUri: next });
    expect(moved.url.origin + moved.url.pathname).toBe(next);
    expect(moved.code).toBeTruthy();
    const old = await authorize(server, { clientId: client.client_id, cookie: person.cookie, challenge, redirectUri: REDIRECT });
    expect(old.code).toBeNull();
    expect(old.url.pathname).toBe("/error");
    expect(old.url.searchParams.get("error")).toBe("invalid_redirect");
  });

  it("refuses a PUT for another client id, a changed auth method, a bad redirect URI or a wider scope, and changes nothing", async () => {
    const client = (await registerClient(server, webClient)) as Registered;
    let accessToken = client.registration_access_token;
    const base = { client_id: client.client_id, redirect_uris: ["https://app.example/cb"] };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...base, client_id: "someone-else" }, "invalid_request"],
      [{ ...base, token_endpoint_auth_method: "none" }, "invalid_client_metadata"],
      [{ ...base, redirect_uris: ["http://app.example/cb"] }, "invalid_redirect_uri"],
      [{ ...base, redirect_uris: [] }, "invalid_redirect_uri"],
      [{ ...base, scope: "openid backup:write admin" }, "invalid_client_metadata"],
      [{ ...base, client_name: 42 }, "invalid_client_metadata"],
    ];
    for (const [body, error] of cases) {
      const res = await manage(server, client.registration_client_uri, accessToken, { method: "PUT", body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json.error).toBe(error);
    }
    const read = await manage(server, client.registration_client_uri, accessToken);
    expect(read.status).toBe(200);
    expect(read.json).toMatchObject({ client_name: "Managed App", redirect_uris: ["https://app.example/cb"], token_endpoint_auth_method: "client_secret_basic" });
    accessToken = read.json.registration_access_token;
    expect(accessToken).toBeTruthy();
  });

  it("deletes the client: its token requests then answer 401 invalid_client, its tokens stop working", async () => {
    const person = await signUp(server);
    const client = (await registerClient(server)) as Registered;
    const { verifier, challenge } = pkce();
    const auth = await authorize(server, { clientId: client.client_id, cookie: person.cookie, challenge });
    const tokens = await token(server, { grant_type: "authorization_code", code: auth.code!, redirect_uri: REDIRECT, client_id: client.client_id, code_verifier: verifier });
    expect(tokens.status).toBe(200);

    const deleted = await manage(server, client.registration_client_uri, client.registration_access_token, { method: "DELETE" });
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe("");

    const refresh = await token(server, { grant_type: "refresh_token", refresh_token: tokens.json.refresh_token, client_id: client.client_id });
    expect(refresh.status).toBe(401);
    expect(refresh.json.error).toBe("invalid_client");
    const userinfo = await server.api("/api/auth/oauth2/userinfo", { headers: { authorization: `Bearer ${tokens.json.access_token}` } });
    expect(userinfo.status).toBe(401);
    expectInvalidToken(await manage(server, client.registration_client_uri, client.registration_access_token, { method: "DELETE" }));
  });
});

describe("RFC 7592 update: redirect URI rules", () => {
  it("accepts exactly the redirect URIs registration accepts (oauth-provider's rules)", async () => {
    const uris = [
      "https://app.example/cb",
      "https://127.0.0.1/cb",
      "https://127.0.0.2/cb",
      "https://localhost/cb",
      "https://[::1]/cb",
      "http://app.example/cb",
      "http://localhost:8080/cb",
      "http://LOCALHOST:8080/cb",
      "http://localhost./cb",
      "http://127.0.0.1:9/cb",
      "http://127.1/cb",
      "http://[::1]:9/cb",
      "http://[0:0::1]/cb",
      "com.example.app:/cb",
      "com.example.app://host/cb",
      "myapp:/cb",
      "file:///etc/passwd",
      "javascript:alert(1)",
      "https://app.example/cb#x",
      "https://user:pw@app.example/cb",
      "not a uri",
    ];
    for (const applicationType of ["web", "native"] as const) {
      for (const uri of uris) {
        const res = await server.api(REGISTER, { body: { client_name: "Rules", redirect_uris: [uri], application_type: applicationType, token_endpoint_auth_method: "none" } });
        expect([201, 400], `${applicationType} ${uri}: ${res.text}`).toContain(res.status);
        if (res.status === 400) expect(res.json.error, `${applicationType} ${uri}`).toBe("invalid_redirect_uri");
        // While developing, registration-policy makes a "web" client with only loopback http URIs native: the row's type is what a PUT checks against.
        const stored = res.status === 201 ? res.json.application_type : applicationType;
        expect(redirectUriProblem(uri, stored) === null, `${applicationType} ${uri}: ${res.json?.error_description}`).toBe(res.status === 201);
      }
    }
  });
});

describe("native clients and unused anonymous registrations", () => {
  it("registers loopback-only redirect URIs without application_type as a native client", async () => {
    const res = await server.api(REGISTER, { body: { client_name: "CLI", redirect_uris: ["http://127.0.0.1:33418/callback", "http://localhost:33418/callback"], token_endpoint_auth_method: "none" } });
    expect(res.status).toBe(201);
    expect(res.json.application_type).toBe("native");
  });

  it("deletes anonymous registrations unused past the cutoff, keeps used and owned ones", async () => {
    const person = await signUp(server);
    const unused = (await registerClient(server)) as Registered;
    const used = (await registerClient(server)) as Registered;
    const owned = await server.api(REGISTER, { cookie: person.cookie, body: { client_name: "Mine", redirect_uris: [REDIRECT], application_type: "native", token_endpoint_auth_method: "none" } });
    expect(owned.status).toBe(201);

    const { verifier, challenge } = pkce();
    const auth = await authorize(server, { clientId: used.client_id, cookie: person.cookie, challenge });
    expect((await token(server, { grant_type: "authorization_code", code: auth.code!, redirect_uri: REDIRECT, client_id: used.client_id, code_verifier: verifier })).status).toBe(200);
    const usedRow = await server.db.selectFrom("oauthClientRegistration").select("lastUsedAt").where("clientId", "=", used.client_id).executeTakeFirstOrThrow();
    expect(usedRow.lastUsedAt).not.toBeNull();

    // All three registered 31 days ago; only `used` has been used since.
    const old = new Date(Date.now() - 31 * 24 * 3600 * 1000);
    await server.db.updateTable("oauthClientRegistration").set({ createdAt: old }).where("clientId", "in", [unused.client_id, used.client_id, owned.json.client_id]).execute();

    const deleted = await expireUnusedAnonymousClients(server.db, new Date(Date.now() - 30 * 24 * 3600 * 1000));
    expect(deleted).toContain(unused.client_id);
    expect(deleted).not.toContain(used.client_id);
    expect(deleted).not.toContain(owned.json.client_id);
    const remaining = await server.db.selectFrom("oauthClient").select("clientId").where("clientId", "in", [unused.client_id, used.client_id, owned.json.client_id]).execute();
    expect(remaining.map((r) => r.clientId).sort()).toEqual([used.client_id, owned.json.client_id].sort());
    expectInvalidToken(await manage(server, unused.registration_client_uri, unused.registration_access_token));
  });

  it("marks a client used at most once an hour per process, not on every token request", async () => {
    const person = await signUp(server);
    const client = (await registerClient(server)) as Registered;
    const lastUsed = async () => (await server.db.selectFrom("oauthClientRegistration").select("lastUsedAt").where("clientId", "=", client.client_id).executeTakeFirstOrThrow()).lastUsedAt;
    const forget = () => server.db.updateTable("oauthClientRegistration").set({ lastUsedAt: null }).where("clientId", "=", client.client_id).execute();

    const { verifier, challenge } = pkce();
    const auth = await authorize(server, { clientId: client.client_id, cookie: person.cookie, challenge });
    const tokens = await token(server, { grant_type: "authorization_code", code: auth.code!, redirect_uri: REDIRECT, client_id: client.client_id, code_verifier: verifier });
    expect(tokens.status).toBe(200);
    expect(await lastUsed()).not.toBeNull();
    // Cleared behind the server's back: the next token request within the hour writes nothing.
    await forget();
    const refreshed = await token(server, { grant_type: "refresh_token", refresh_token: tokens.json.refresh_token, client_id: client.client_id });
    expect(refreshed.status).toBe(200);
    expect(await lastUsed()).toBeNull();
  });

  it("clientUseRecorder: one statement per client per interval, again after it, again after a failure, bounded memory", async () => {
    const a = (await registerClient(server)) as Registered;
    const b = (await registerClient(server)) as Registered;
    const lastUsed = async (id: string) => (await server.db.selectFrom("oauthClientRegistration").select("lastUsedAt").where("clientId", "=", id).executeTakeFirstOrThrow()).lastUsedAt;
    const forget = (id: string) => server.db.updateTable("oauthClientRegistration").set({ lastUsedAt: null }).where("clientId", "=", id).execute();
    const HOUR = 3600_000;
    const t0 = Date.now();
    const record = clientUseRecorder(server.db, { everyMs: HOUR, maxClients: 1 });

    expect(await record(a.client_id, new Date(t0))).toBe(true);
    expect(await lastUsed(a.client_id)).not.toBeNull();
    await forget(a.client_id);
    expect(await record(a.client_id, new Date(t0 + HOUR - 1000))).toBe(false);
    expect(await lastUsed(a.client_id)).toBeNull();
    expect(await record(a.client_id, new Date(t0 + HOUR))).toBe(true);
    expect(await lastUsed(a.client_id)).not.toBeNull();

    // maxClients 1: remembering b forgets a, whose next use is written again.
    expect(await record(b.client_id, new Date(t0 + HOUR))).toBe(true);
    await forget(a.client_id);
    expect(await record(a.client_id, new Date(t0 + HOUR + 1000))).toBe(true);
    expect(await lastUsed(a.client_id)).not.toBeNull();

    // A failed statement is not remembered: the next use tries again.
    const failing = clientUseRecorder({ updateTable: () => { throw new Error("database away"); } } as never, { everyMs: HOUR });
    await expect(failing(a.client_id, new Date(t0))).rejects.toThrow("database away");
    await expect(failing(a.client_id, new Date(t0 + 1000))).rejects.toThrow("database away");
  });
});
