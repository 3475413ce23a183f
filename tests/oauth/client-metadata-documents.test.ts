import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseJsonOrNull } from "../../lib/json.js";
import { freshFor } from "../../plugins/client-metadata-documents/document.js";
import { useTempDirs } from "../helpers/fixtures.js";
import { authorize, authorizeUrl, pkce, REDIRECT, signUp, token } from "../helpers/oauth.js";
import { cookiesOf, postForm, startTestServer, type TestServer } from "../helpers/server.js";

/**
 * Client ID metadata documents (draft-ietf-oauth-client-id-metadata-document): a client_id
 * that is an https URL is fetched and registered. The documents are served over https on
 * loopback with a certificate made here; the server trusts it through OUTBOUND_EXTRA_CA_FILE (off
 * by default) and reaches loopback through OUTBOUND_ALLOW_PRIVATE (development only).
 */

const tempDir = useTempDirs("cimd-");

interface Served {
  body: string;
  headers?: Record<string, string>;
  /** Never answer (a slow document). */
  hang?: boolean;
}
const documents = new Map<string, Served>();
const fetches = new Map<string, number>();
let docs: Server;
let caFile: string;
let base: string;

function serve(path: string, doc: Record<string, unknown> | ((clientId: string) => Record<string, unknown>), served: Omit<Served, "body"> = {}) {
  const clientId = `${base}${path}`;
  const body = JSON.stringify(typeof doc === "function" ? doc(clientId) : doc);
  documents.set(path, { body, ...served });
  return clientId;
}

function publicClient(clientId: string, extra: Record<string, unknown> = {}) {
  return {
    client_id: clientId,
    client_name: "Local MCP Client",
    redirect_uris: [REDIRECT],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
    ...extra,
  };
}

function fixture(name: string) {
  return (clientId: string) => JSON.parse(readFileSync(join(import.meta.dirname, "..", "fixtures", "client-metadata", name), "utf8").replace("{{CLIENT_ID}}", clientId));
}

beforeAll(async () => {
  const dir = tempDir();
  caFile = join(dir, "cert.pem");
  // A self-signed certificate for 127.0.0.1, made for this run only.
  execFileSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", join(dir, "key.pem"), "-out", caFile], { stdio: "ignore" });
  docs = createServer({ key: readFileSync(join(dir, "key.pem")), cert: readFileSync(caFile) }, (req, res) => {
    const path = new URL(req.url ?? "/", "https://x").pathname;
    fetches.set(path, (fetches.get(path) ?? 0) + 1);
    const doc = documents.get(path);
    if (!doc) return res.writeHead(404).end();
    if (doc.hang) return;
    res.writeHead(200, { "content-type": "application/json", ...doc.headers }).end(doc.body);
  });
  await new Promise<void>((resolve) => docs.listen(0, "127.0.0.1", resolve));
  base = `https://127.0.0.1:${(docs.address() as AddressInfo).port}`;
});
afterAll(async () => {
  docs.closeAllConnections();
  await new Promise((resolve) => docs.close(resolve));
});

/** The authorize endpoint's answer for a signed-in person: where it sends the browser. */
async function authorizeLocation(server: TestServer, cookie: string, params: Record<string, string>) {
  const { challenge } = pkce();
  const res = await server.api(
    authorizeUrl(server, { response_type: "code", redirect_uri: REDIRECT, scope: "openid profile", state: "s1", code_challenge: challenge, code_challenge_method: "S256", ...params }),
    { cookie },
  );
  const location = res.headers.get("location") ?? res.json?.url;
  expect(location, `${res.status} ${res.text}`).toBeTruthy();
  return new URL(location, server.url);
}

/**
 * A refused client: RFC 6749 §4.1.2.1, an invalid client_id is never redirected to; the
 * authorize endpoint answers 400 invalid_client with the reason, and nothing is registered.
 */
async function expectRefused(server: TestServer, clientId: string, description: RegExp) {
  const person = await signUp(server);
  const { challenge } = pkce();
  const res = await server.api(authorizeUrl(server, { response_type: "code", client_id: clientId, redirect_uri: REDIRECT, scope: "openid", state: "s1", code_challenge: challenge, code_challenge_method: "S256" }), { cookie: person.cookie });
  expect(res.status, res.text).toBe(400);
  expect(res.headers.get("location")).toBeNull();
  expect(res.json.error).toBe("invalid_client");
  expect(res.json.error_description).toMatch(description);
  const rows = await server.db.selectFrom("oauthClient").select("clientId").where("clientId", "=", clientId).execute();
  expect(rows).toEqual([]);
}

describe("client ID metadata documents (development setting: loopback allowed)", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ OUTBOUND_ALLOW_PRIVATE: "true", OUTBOUND_EXTRA_CA_FILE: caFile, CLIENT_METADATA_TIMEOUT: "500" });
  });
  afterAll(() => server.close());

  it("advertises client_id_metadata_document_supported, S256 and iss at both metadata URLs, issuer exactly AUTH_URL", async () => {
    for (const path of ["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"]) {
      const res = await server.api(path);
      expect(res.status).toBe(200);
      expect(res.json.issuer).toBe(server.url);
      expect(res.json.code_challenge_methods_supported).toEqual(["S256"]);
      expect(res.json.authorization_response_iss_parameter_supported).toBe(true);
      expect(res.json.client_id_metadata_document_supported).toBe(true);
    }
  });

  it("runs the authorization code flow with PKCE for a client known only by its document, fetching it once", async () => {
    const clientId = serve("/flow/client.json", (id) => publicClient(id), { headers: { "cache-control": "max-age=0" } });
    const person = await signUp(server);
    const { verifier, challenge } = pkce();
    const granted = await authorize(server, { clientId, cookie: person.cookie, challenge });
    expect(granted.url.origin + granted.url.pathname).toBe(REDIRECT);
    expect(granted.url.searchParams.get("iss")).toBe(server.url);
    expect(granted.code).toBeTruthy();
    const tokens = await token(server, { grant_type: "authorization_code", code: granted.code!, redirect_uri: REDIRECT, client_id: clientId, code_verifier: verifier });
    expect(tokens.status).toBe(200);
    expect(tokens.json.access_token).toBeTruthy();
    expect(tokens.json.refresh_token).toBeTruthy();
    // max-age=0 is held to the cache floor: authorize, consent and token made one fetch.
    expect(fetches.get("/flow/client.json")).toBe(1);
    const row = await server.db.selectFrom("oauthClient").select(["clientDiscoveryId", "tokenEndpointAuthMethod"]).where("clientId", "=", clientId).executeTakeFirstOrThrow();
    expect(row).toEqual({ clientDiscoveryId: "cimd", tokenEndpointAuthMethod: "none" });
  });

  it("refuses a document that names another client_id", async () => {
    const clientId = serve("/mismatch/client.json", publicClient(`${base}/someone-else.json`));
    await expectRefused(server, clientId, /client_id is not the URL/);
  });

  it("refuses a redirect URI the document does not list (exact match), on the error page and not at the client", async () => {
    const clientId = serve("/redirects/client.json", (id) => publicClient(id));
    const person = await signUp(server);
    const url = await authorizeLocation(server, person.cookie, { client_id: clientId, redirect_uri: "https://attacker.example/callback" });
    expect(url.origin + url.pathname).toBe(`${server.url}/error`);
    expect(url.searchParams.get("error")).toBe("invalid_redirect");
    const close = await authorizeLocation(server, person.cookie, { client_id: clientId, redirect_uri: `${REDIRECT}/more` });
    expect(close.origin + close.pathname).toBe(`${server.url}/error`);
  });

  it("refuses a document larger than 5 KiB", async () => {
    const clientId = serve("/big/client.json", (id) => publicClient(id, { client_name: "x".repeat(6 * 1024) }));
    await expectRefused(server, clientId, /larger than 5120 bytes/);
  });

  it("refuses a document that does not arrive before the deadline", async () => {
    const clientId = serve("/slow/client.json", (id) => publicClient(id), { hang: true });
    await expectRefused(server, clientId, /no answer within 500 ms/);
  });

  it("refuses a client_id URL with a shared secret, a fragment or no path", async () => {
    const secret = serve("/secret/client.json", (id) => publicClient(id, { token_endpoint_auth_method: "client_secret_basic" }));
    await expectRefused(server, secret, /shared secret/);
    await expectRefused(server, `${base}/secret/client.json#x`, /fragment/);
    await expectRefused(server, `${base}/`, /path/);
  });

  it("puts iss on error redirects to the client (RFC 9207 §2): an invalid scope and a denied consent", async () => {
    const clientId = serve("/errors/client.json", (id) => publicClient(id));
    const person = await signUp(server);
    const scope = await authorizeLocation(server, person.cookie, { client_id: clientId, scope: "openid no-such-scope" });
    expect(scope.origin + scope.pathname).toBe(REDIRECT);
    expect(scope.searchParams.get("error")).toBe("invalid_scope");
    expect(scope.searchParams.get("iss")).toBe(server.url);
    const denied = await authorize(server, { clientId, cookie: person.cookie, consent: false });
    expect(denied.url.searchParams.get("error")).toBe("access_denied");
    expect(denied.url.searchParams.get("iss")).toBe(server.url);
  });

  describe("golden documents shaped like widely used MCP clients' (tests/fixtures/client-metadata)", () => {
    for (const name of ["editor.json", "assistant.json", "cli-several-methods.json"]) {
      it(`accepts ${name} and completes the flow at each kind of its redirect URIs`, async () => {
        const clientId = serve(`/golden/${name}`, fixture(name));
        const doc = fixture(name)(clientId) as { redirect_uris: string[] };
        const person = await signUp(server);
        for (const redirectUri of doc.redirect_uris) {
          const { verifier, challenge } = pkce();
          const granted = await authorize(server, { clientId, cookie: person.cookie, challenge, redirectUri, scope: "openid profile" });
          expect(granted.url.origin + granted.url.pathname, JSON.stringify(Object.fromEntries(granted.url.searchParams))).toBe(new URL(redirectUri).origin + new URL(redirectUri).pathname);
          expect(granted.url.searchParams.get("iss")).toBe(server.url);
          const tokens = await token(server, { grant_type: "authorization_code", code: granted.code!, redirect_uri: redirectUri, client_id: clientId, code_verifier: verifier });
          expect(tokens.status, tokens.text).toBe(200);
        }
        const row = await server.db.selectFrom("oauthClient").select(["tokenEndpointAuthMethod", "icon"]).where("clientId", "=", clientId).executeTakeFirstOrThrow();
        expect(row.tokenEndpointAuthMethod).toBe("none");
        expect(row.icon).toBe((doc as { logo_uri?: string }).logo_uri);
      });
    }
  });
});

describe("client ID metadata documents without the development setting", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ OUTBOUND_EXTRA_CA_FILE: caFile, CLIENT_METADATA_TIMEOUT: "500" });
  });
  afterAll(() => server.close());

  it("refuses a document at a loopback address before any byte is sent", async () => {
    const clientId = serve("/private/client.json", (id) => publicClient(id));
    await expectRefused(server, clientId, /resolves to 127\.0\.0\.1: loopback/);
    expect(fetches.get("/private/client.json") ?? 0).toBe(0);
  });

  it("refuses a document at an IPv6 form of a loopback address (IPv4-translated, mapped, NAT64, 6to4)", async () => {
    const port = new URL(base).port;
    for (const host of ["[::ffff:0:7f00:1]", "[::ffff:7f00:1]", "[64:ff9b::7f00:1]", "[2002:7f00:1::]"]) {
      await expectRefused(server, `https://${host}:${port}/translated/client.json`, /resolves to .*127\.0\.0\.1: loopback/);
    }
  });
});

/**
 * Wherever a client_id names a document that cannot be had (never fetchable, or fetched once
 * and gone since), the request is the client's fault: a 4xx with an RFC 6749 error (or an
 * error page for a browser), never a 500. Instance `b` shares `a`'s database but never
 * fetched the documents itself, so it fetches again whatever `a` registered.
 */
describe("a client whose metadata document cannot be had is refused with a 4xx at every endpoint that names it", () => {
  let a: TestServer;
  let b: TestServer;
  const BROWSER = { accept: "text/html", "sec-fetch-mode": "navigate", "sec-fetch-dest": "document" };
  /** A top-level browser navigation. node:http, as fetch() sends `Sec-Fetch-Mode: cors` whatever it is told. */
  function navigate(url: string, init: { method?: string; cookie?: string; body?: string } = {}) {
    const headers: Record<string, string> = { ...BROWSER, ...(init.cookie ? { cookie: init.cookie } : {}) };
    if (init.body !== undefined) Object.assign(headers, { "content-type": "application/x-www-form-urlencoded", "content-length": String(Buffer.byteLength(init.body)), origin: new URL(url).origin });
    return new Promise<{ status: number; headers: Headers; json: any; text: string }>((resolve, reject) => {
      const req = httpRequest(url, { method: init.method ?? "GET", headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          const answer = new Headers();
          for (const [name, value] of Object.entries(res.headers)) for (const v of [value ?? []].flat()) answer.append(name, v);
          const text = Buffer.concat(chunks).toString("utf8");
          resolve({ status: res.statusCode ?? 0, headers: answer, json: parseJsonOrNull(text), text });
        });
      });
      req.on("error", reject);
      req.end(init.body);
    });
  }
  const LOGGED_OUT = "http://127.0.0.1:9999/logged-out";
  beforeAll(async () => {
    const env = { OUTBOUND_ALLOW_PRIVATE: "true", OUTBOUND_EXTRA_CA_FILE: caFile, CLIENT_METADATA_TIMEOUT: "500", DATABASE_URL: process.env.TEST_DATABASE_URL || join(tempDir(), "shared.sqlite") };
    a = await startTestServer(env);
    b = await startTestServer(env);
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  /** 4xx with an RFC 6749 error object, or (browser) an HTML page; never a 5xx. */
  function expectClientFault(name: string, res: { status: number; headers: Headers; json: any; text: string }, html = false) {
    expect(res.status, `${name}: ${res.status} ${res.text.slice(0, 200)}`).toBeGreaterThanOrEqual(400);
    expect(res.status, `${name}: ${res.status} ${res.text.slice(0, 200)}`).toBeLessThan(500);
    if (html) expect(res.headers.get("content-type"), name).toMatch(/^text\/html/);
    else expect(String(res.json?.error), `${name}: ${res.text.slice(0, 200)}`).toMatch(/^(invalid_client|invalid_request|invalid_grant|unauthorized_client)$/);
  }

  const endSession = (server: TestServer, params: Record<string, string>, browser?: { cookie?: string }) => {
    const path = `/api/auth/oauth2/end-session?${new URLSearchParams(params)}`;
    return browser ? navigate(server.url + path, browser) : server.api(path);
  };

  it("never fetchable: authorize, token, introspect, revoke, device code, end-session and the client lookups", async () => {
    const clientId = `${base}/never/client.json`;
    const person = await signUp(a);
    const hint = [{ alg: "EdDSA" }, { iss: a.url, aud: clientId, sub: person.user.id, sid: "s" }].map((part) => Buffer.from(JSON.stringify(part)).toString("base64url")).join(".") + ".c2ln";
    const { challenge, verifier } = pkce();
    const cases: [string, () => Promise<{ status: number; headers: Headers; json: any; text: string }>, boolean?][] = [
      ["authorize", () => a.api(authorizeUrl(a, { response_type: "code", client_id: clientId, redirect_uri: REDIRECT, scope: "openid", state: "s", code_challenge: challenge, code_challenge_method: "S256" }), { cookie: person.cookie })],
      ["token (authorization_code)", () => token(a, { grant_type: "authorization_code", code: "x", redirect_uri: REDIRECT, client_id: clientId, code_verifier: verifier })],
      ["token (refresh_token)", () => token(a, { grant_type: "refresh_token", refresh_token: "x", client_id: clientId })],
      ["token (device_code)", () => token(a, { grant_type: "urn:ietf:params:oauth:grant-type:device_code", device_code: "x", client_id: clientId })],
      ["introspect", () => postForm(a, "/api/auth/oauth2/introspect", { token: "x", client_id: clientId, client_secret: "s" })],
      ["revoke", () => postForm(a, "/api/auth/oauth2/revoke", { token: "x", client_id: clientId })],
      ["device/code", () => postForm(a, "/api/auth/device/code", { client_id: clientId, scope: "openid" })],
      ["end-session client_id", () => endSession(a, { client_id: clientId })],
      ["end-session id_token_hint", () => endSession(a, { id_token_hint: hint })],
      ["end-session client_id, browser", () => endSession(a, { client_id: clientId }, {}), true],
      ["end-session id_token_hint, browser", () => endSession(a, { id_token_hint: hint }, {}), true],
      ["public-client", () => a.api(`/api/auth/oauth2/public-client?${new URLSearchParams({ client_id: clientId })}`, { cookie: person.cookie })],
    ];
    for (const [name, send, html] of cases) expectClientFault(name, await send(), html);
    expect(await a.db.selectFrom("oauthClient").select("clientId").where("clientId", "=", clientId).execute()).toEqual([]);
  });

  it("fetched once and gone since: the same endpoints, the consent step and a confirmed logout", async () => {
    const path = "/gone/client.json";
    const clientId = serve(path, (id) => publicClient(id, { post_logout_redirect_uris: [LOGGED_OUT] }));
    const person = await signUp(a);
    // On `a`, while the document is served: an authorization waiting at consent, and a finished one.
    const pending = await authorizeLocation(a, person.cookie, { client_id: clientId });
    expect(pending.pathname).toBe("/consent");
    const { verifier, challenge } = pkce();
    const granted = await authorize(a, { clientId, cookie: person.cookie, challenge, scope: "openid offline_access" });
    const tokens = await token(a, { grant_type: "authorization_code", code: granted.code!, redirect_uri: REDIRECT, client_id: clientId, code_verifier: verifier });
    expect(tokens.status, tokens.text).toBe(200);
    // The operator lets the client use end-session; a browser starts a logout that waits for confirmation.
    await a.db.updateTable("oauthClient").set({ enableEndSession: true }).where("clientId", "=", clientId).execute();
    const asked = await endSession(a, { client_id: clientId, post_logout_redirect_uri: LOGGED_OUT }, { cookie: person.cookie });
    expect(asked.status, asked.text).toBe(200);
    const confirmCookie = cookiesOf(asked.headers);
    expect(confirmCookie).not.toBe("");

    // The document goes away, and `a`'s fetch is older than the cache floor.
    documents.delete(path);
    await a.db.updateTable("oauthClient").set({ updatedAt: new Date(Date.now() - 3600_000) }).where("clientId", "=", clientId).execute();
    const cases: [string, () => Promise<{ status: number; headers: Headers; json: any; text: string }>, boolean?][] = [
      ["authorize", () => b.api(authorizeUrl(b, { response_type: "code", client_id: clientId, redirect_uri: REDIRECT, scope: "openid", state: "s", code_challenge: challenge, code_challenge_method: "S256" }), { cookie: person.cookie })],
      ["consent", () => b.api("/api/auth/oauth2/consent", { cookie: person.cookie, body: { accept: true, oauth_query: pending.search.slice(1) } })],
      ["token (refresh_token)", () => token(b, { grant_type: "refresh_token", refresh_token: tokens.json.refresh_token, client_id: clientId })],
      ["revoke", () => postForm(b, "/api/auth/oauth2/revoke", { token: tokens.json.refresh_token, client_id: clientId })],
      ["device/code", () => postForm(b, "/api/auth/device/code", { client_id: clientId, scope: "openid" })],
      ["end-session client_id", () => endSession(b, { client_id: clientId })],
      ["end-session id_token_hint", () => endSession(b, { id_token_hint: tokens.json.id_token, client_id: clientId })],
      ["end-session client_id, browser", () => endSession(b, { client_id: clientId }, {}), true],
    ];
    for (const [name, send, html] of cases) expectClientFault(name, await send(), html);

    // The confirmed logout ends the session, but does not send the browser to the client.
    const confirmed = await navigate(`${b.url}/api/auth/oauth2/end-session/confirm`, { method: "POST", cookie: `${person.cookie}; ${confirmCookie}`, body: "action=confirm" });
    expect(confirmed.status, confirmed.text.slice(0, 200)).toBe(200);
    expect(confirmed.headers.get("location")).toBeNull();
    expect((await b.api("/api/auth/get-session", { cookie: person.cookie })).json).toBeNull();
  });
});

describe("how long a fetched document is trusted (its HTTP caching headers, held between a floor and a ceiling)", () => {
  const fresh = (headers: Record<string, string>) => freshFor(new Headers(headers), 60, 86_400);
  it("follows max-age and s-maxage (minus Age) inside the bounds", () => {
    expect(fresh({ "cache-control": "public, max-age=600" })).toBe(600);
    expect(fresh({ "cache-control": "max-age=600, s-maxage=300" })).toBe(300);
    expect(fresh({ "cache-control": "max-age=600", age: "100" })).toBe(500);
    expect(fresh({ expires: new Date(Date.now() + 7200_000).toUTCString(), date: new Date().toUTCString() })).toBeGreaterThan(7000);
  });
  it("holds no-store, no-cache and short lifetimes to the floor, and long or absent ones to the ceiling", () => {
    expect(fresh({ "cache-control": "no-store" })).toBe(60);
    expect(fresh({ "cache-control": "no-cache, max-age=600" })).toBe(60);
    expect(fresh({ "cache-control": "max-age=5" })).toBe(60);
    expect(fresh({ "cache-control": "max-age=31536000" })).toBe(86_400);
    expect(fresh({})).toBe(86_400);
  });
});
