import { request } from "node:http";
import { describe, expect, it } from "vitest";
import { MAX_BODY_BYTES } from "../../routes/auth/better-auth.js";
import { useTestServer } from "../helpers/fixtures.js";
import { signUp } from "../helpers/oauth.js";
import { startTestServer, uniqueClientIp } from "../helpers/server.js";

const server = useTestServer();

const register = (body: unknown) => server.api("/api/auth/oauth2/register", { body });

describe("dynamic client registration (RFC 7591)", () => {
  it("registers a public client without a session: 201, client_id, issued-at, no secret", async () => {
    const res = await register({ client_name: "Native", redirect_uris: ["http://127.0.0.1:8080/cb"], token_endpoint_auth_method: "none", application_type: "native" });
    expect(res.status).toBe(201);
    expect(res.headers.get("content-type")).toContain("application/json");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(typeof res.json.client_id).toBe("string");
    expect(typeof res.json.client_id_issued_at).toBe("number");
    expect(res.json.client_secret).toBeUndefined();
    expect(res.json).toMatchObject({ client_name: "Native", redirect_uris: ["http://127.0.0.1:8080/cb"], token_endpoint_auth_method: "none" });
  });

  it("gives confidential clients a secret once and stores only its hash", async () => {
    const res = await register({ client_name: "Web", redirect_uris: ["https://app.example.com/cb"], token_endpoint_auth_method: "client_secret_basic" });
    expect(res.status).toBe(201);
    expect(typeof res.json.client_secret).toBe("string");
    expect(res.json.client_secret.length).toBeGreaterThanOrEqual(32);
    const row = await server.db.selectFrom("oauthClient").select(["clientSecret"]).where("clientId", "=", res.json.client_id).executeTakeFirstOrThrow();
    expect(row.clientSecret).toBeTruthy();
    expect(row.clientSecret).not.toBe(res.json.client_secret);
    expect(row.clientSecret).not.toContain(res.json.client_secret);
  });

  it("accepts http redirect URIs on every loopback host for native apps", async () => {
    for (const uri of ["http://localhost:3000/cb", "http://127.0.0.1/cb", "http://[::1]:5000/cb"]) {
      const res = await register({ client_name: "Loop", redirect_uris: [uri], token_endpoint_auth_method: "none", application_type: "native" });
      expect(res.status, uri).toBe(201);
    }
  });

  it("while developing, registers a web app with loopback http redirect URIs as native", async () => {
    const res = await register({ client_name: "Dev web app", redirect_uris: ["http://localhost:5173/callback"], token_endpoint_auth_method: "none" });
    expect(res.status).toBe(201);
    expect(res.json.application_type).toBe("native");
  });

  it("refuses bad redirect URIs with invalid_redirect_uri", async () => {
    const bad = [
      "http://app.example.com/cb", // http off loopback
      "https://app.example.com/cb#fragment",
      "not a url",
      "/relative/path",
      "javascript:alert(1)",
    ];
    for (const uri of bad) {
      const res = await register({ client_name: "Bad", redirect_uris: [uri] });
      expect(res.status, uri).toBe(400);
      expect(res.json.error, uri).toBe("invalid_redirect_uri");
      expect(typeof res.json.error_description).toBe("string");
    }
  });

  it("refuses invalid metadata with invalid_client_metadata (or invalid_redirect_uri for the URIs)", async () => {
    const cases: unknown[] = [
      {},
      { redirect_uris: "https://app.example.com/cb" },
      { redirect_uris: [], client_name: "Empty" },
      { redirect_uris: ["https://app.example.com/cb"], token_endpoint_auth_method: "magic" },
      { redirect_uris: ["https://app.example.com/cb"], grant_types: ["password"] },
      { redirect_uris: ["https://app.example.com/cb"], client_name: 42 },
      [],
      "just a string",
    ];
    for (const body of cases) {
      const res = await register(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(["invalid_client_metadata", "invalid_redirect_uri"], JSON.stringify(body)).toContain(res.json?.error);
    }
  });

  it("answers malformed JSON and wrong content types with an RFC 6749 error object", async () => {
    const bodies: Array<[string, string]> = [
      ["application/json", "{not json"],
      ["text/plain", "client_name=x"],
      ["application/x-www-form-urlencoded", "client_name=x&redirect_uris=https://a.example/cb"],
    ];
    for (const [type, body] of bodies) {
      const res = await server.api("/api/auth/oauth2/register", { body, headers: { "content-type": type } });
      expect(res.status, type).toBeGreaterThanOrEqual(400);
      expect(res.status, type).toBeLessThan(500);
      expect(typeof res.json.error, type).toBe("string");
      expect(typeof res.json.error_description, type).toBe("string");
    }
  });

  it("answers an oversized body with 413, never a 500 or a hang", async () => {
    const res = await server.api("/api/auth/oauth2/register", { body: JSON.stringify({ client_name: "x".repeat(2 * 1024 * 1024), redirect_uris: ["https://a.example/cb"] }) });
    expect(res.status).toBe(413);
    // An OAuth endpoint: RFC 6749's error object, as every other refusal there.
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.json).toMatchObject({ error: "invalid_request", error_description: expect.any(String) });
  });

  it("reads a chunked body (no Content-Length) too, and stops it at the limit with 413", async () => {
    const chunked = (parts: string[]) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request(server.url + "/api/auth/oauth2/register", { method: "POST", headers: { "content-type": "application/json", "transfer-encoding": "chunked" } }, (res) => {
          let body = "";
          res.setEncoding("utf8");
          res.on("data", (chunk) => (body += chunk));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on("error", reject);
        for (const part of parts) req.write(part);
        req.end();
      });
    const json = JSON.stringify({ client_name: "Chunked", redirect_uris: ["https://chunked.example/cb"], token_endpoint_auth_method: "none" });
    const ok = await chunked([json.slice(0, 20), json.slice(20)]);
    expect(ok.status, ok.body).toBe(201);
    expect(JSON.parse(ok.body).client_name).toBe("Chunked");
    const big = JSON.stringify({ client_name: "x".repeat(MAX_BODY_BYTES + 1024), redirect_uris: ["https://a.example/cb"] });
    const tooBig = await chunked([big.slice(0, 100_000), big.slice(100_000)]);
    expect(tooBig.status).toBe(413);
    expect(JSON.parse(tooBig.body)).toMatchObject({ error: "invalid_request" });
  });
});

describe("registration limits and post-logout redirect URIs", () => {
  const web = { redirect_uris: ["https://rp.example.com/cb"], token_endpoint_auth_method: "none" };

  it("refuses post_logout_redirect_uris that would be unsafe redirect targets, as redirect_uris are", async () => {
    for (const uri of ["file:///etc/passwd", "https://user:pass@rp.example.com/out", "https://rp.example.com/out#x", "custom.scheme:/out", "myapp://host/out", "http://rp.example.com/out", "https://127.0.0.1/out", "not a uri"]) {
      const res = await register({ ...web, post_logout_redirect_uris: [uri] });
      expect(res.status, uri).toBe(400);
      expect(res.json.error, uri).toBe("invalid_redirect_uri");
    }
    const ok = await register({ ...web, post_logout_redirect_uris: ["https://rp.example.com/logged-out"] });
    expect(ok.status).toBe(201);
    expect(ok.json.post_logout_redirect_uris).toEqual(["https://rp.example.com/logged-out"]);
    // A native app may come back to a loopback port or its reverse-domain scheme.
    const native = await register({
      redirect_uris: ["com.example.app:/cb"],
      application_type: "native",
      token_endpoint_auth_method: "none",
      post_logout_redirect_uris: ["com.example.app:/logged-out", "http://127.0.0.1:8123/out"],
    });
    expect(native.status, native.text).toBe(201);
  });

  it("bounds list lengths and string sizes with 400 invalid_client_metadata / invalid_redirect_uri", async () => {
    const many = Array.from({ length: 21 }, (_, i) => `https://rp.example.com/cb${i}`);
    const cases: [Record<string, unknown>, string][] = [
      [{ ...web, redirect_uris: many }, "invalid_redirect_uri"],
      [{ ...web, post_logout_redirect_uris: many }, "invalid_redirect_uri"],
      [{ ...web, redirect_uris: [`https://rp.example.com/${"a".repeat(2100)}`] }, "invalid_redirect_uri"],
      [{ ...web, client_name: "n".repeat(201) }, "invalid_client_metadata"],
      [{ ...web, contacts: Array.from({ length: 21 }, (_, i) => `c${i}@example.com`) }, "invalid_client_metadata"],
      [{ ...web, logo_uri: `https://rp.example.com/${"l".repeat(2100)}` }, "invalid_client_metadata"],
    ];
    for (const [body, error] of cases) {
      const res = await register(body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(res.json.error).toBe(error);
    }
    const atLimit = await register({ ...web, redirect_uris: many.slice(0, 20), client_name: "n".repeat(200) });
    expect(atLimit.status, atLimit.text).toBe(201);
  });
});

describe("client metadata rules on /oauth2/register, /oauth2/create-client and /oauth2/update-client alike", () => {
  const web = { client_name: "Rules", redirect_uris: ["https://rp.example.com/cb"], token_endpoint_auth_method: "none" };
  /** A public EC signing key as a JWK (RFC 7517), `pad` characters of padding in an extension member. */
  const jwk = (i: number, pad = 0) => ({ kty: "EC", crv: "P-256", kid: `k${i}`, use: "sig", x: "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", y: "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0", ...(pad ? { x_note: "p".repeat(pad) } : {}) });
  const jwks = (n: number, pad = 0) => ({ keys: Array.from({ length: n }, (_, i) => jwk(i, pad)) });
  const BIDI = ["\u202A", "\u202B", "\u202C", "\u202D", "\u202E", "\u2066", "\u2067", "\u2068", "\u2069", "\u200E", "\u200F", "\u061C"];
  const URI_FIELDS = ["client_uri", "logo_uri", "tos_uri", "policy_uri", "jwks_uri"];
  const BAD_URIS = ["javascript:alert(document.cookie)", "JavaScript:alert(1)", "data:text/html,<script>alert(1)</script>", "data:image/svg+xml;base64,PHN2Zz4=", "http://rp.example.com/x", "ftp://rp.example.com/x", "https://user:pw@rp.example.com/x", "vbscript:x", "//rp.example.com/x"];

  /** The metadata refused (400 invalid_client_metadata) and accepted by each of the three routes. */
  const refused: [string, Record<string, unknown>][] = [
    ["11 keys", { jwks: jwks(11) }],
    ["jwks over 8 KiB", { jwks: jwks(2, 4500) }],
    ...URI_FIELDS.flatMap((field) => BAD_URIS.map((uri): [string, Record<string, unknown>] => [`${field} ${uri}`, { [field]: uri }])),
    ...BIDI.map((c): [string, Record<string, unknown>] => [`client_name with U+${c.charCodeAt(0).toString(16)}`, { client_name: `Good${c}elif.exe` }]),
    ["client_name with a newline", { client_name: "Line\nbreak" }],
    ["client_name of 201 characters", { client_name: "n".repeat(201) }],
  ];
  const accepted: Record<string, unknown> = {
    jwks: jwks(10),
    client_uri: "https://rp.example.com/",
    logo_uri: "https://rp.example.com/logo.png",
    tos_uri: "http://127.0.0.1:8080/tos", // loopback http while developing (NODE_ENV=test)
    policy_uri: "https://rp.example.com/privacy",
    client_name: "Café ☕ — רשמי", // any script; only the controls are refused
  };

  function expectRefused(res: { status: number; json: any; text: string }, what: string) {
    expect(res.status, `${what}: ${res.text.slice(0, 200)}`).toBe(400);
    expect(res.json?.error, what).toBe("invalid_client_metadata");
    expect(typeof res.json?.error_description, what).toBe("string");
  }

  it("dynamic registration refuses oversized jwks, non-https links and names with control characters", async () => {
    for (const [what, metadata] of refused) expectRefused(await register({ ...web, ...metadata }), what);
    const ok = await register({ ...web, ...accepted });
    expect(ok.status, ok.text).toBe(201);
  });

  it("create-client (signed in) obeys the same rules", async () => {
    const person = await signUp(server);
    const create = (metadata: Record<string, unknown>) => server.api("/api/auth/oauth2/create-client", { cookie: person.cookie, body: { ...web, ...metadata } });
    for (const [what, metadata] of refused) expectRefused(await create(metadata), what);
    for (const [what, metadata] of [["20 redirect URIs", { redirect_uris: Array.from({ length: 21 }, (_, i) => `https://rp.example.com/${i}`) }], ["long software_statement", { software_statement: "s".repeat(9000) }]] as const) {
      const res = await create(metadata);
      expect(res.status, what).toBe(400);
    }
    const ok = await create(accepted);
    expect(ok.status, ok.text).toBeLessThan(300);
  });

  it("update-client obeys the same rules: a client cannot grow past them after registering", async () => {
    const person = await signUp(server);
    const created = await server.api("/api/auth/oauth2/create-client", { cookie: person.cookie, body: web });
    expect(created.status, created.text).toBeLessThan(300);
    const update = (metadata: Record<string, unknown>) => server.api("/api/auth/oauth2/update-client", { cookie: person.cookie, body: { client_id: created.json.client_id, update: metadata } });
    // update-client takes no jwks; its other members follow the rules.
    for (const [what, metadata] of refused.filter(([, m]) => !("jwks" in m) && !("jwks_uri" in m))) expectRefused(await update(metadata), what);
    expectRefused(await update({ contacts: Array.from({ length: 21 }, (_, i) => `c${i}@example.com`) }), "21 contacts");
    const row = await server.db.selectFrom("oauthClient").select(["name", "uri", "icon"]).where("clientId", "=", created.json.client_id).executeTakeFirstOrThrow();
    expect(row).toEqual({ name: "Rules", uri: null, icon: null });
    const ok = await update({ client_name: "Renamed", logo_uri: "https://rp.example.com/new.png" });
    expect(ok.status, ok.text).toBe(200);
  });
});

describe("NUL characters (refused at the edge, the same on SQLite and PostgreSQL)", () => {
  it("answers 400 in the route's family for U+0000 in JSON, forms, paths, queries and Basic credentials", async () => {
    const reg = await register({ client_name: "a\u0000b", redirect_uris: ["https://rp.example.com/cb"], token_endpoint_auth_method: "none" });
    expect(reg.status).toBe(400);
    expect(reg.json.error).toBe("invalid_request");
    const form = (body: string, headers: Record<string, string> = {}) =>
      fetch(server.url + "/api/auth/oauth2/token", { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", ...headers }, body });
    const tokenRes = await form("grant_type=refresh_token&refresh_token=x%00&client_id=abc");
    expect(tokenRes.status).toBe(400);
    expect(((await tokenRes.json()) as { error: string }).error).toBe("invalid_request");
    const basic = await form("grant_type=refresh_token&refresh_token=x", { authorization: "Basic " + Buffer.from("a\u0000:b").toString("base64") });
    expect(basic.status).toBe(400);
    const path = await fetch(server.url + "/api/authorized-apps/%00", { method: "DELETE" });
    expect(path.status).toBe(400);
    expect(path.headers.get("content-type")).toContain("application/problem+json");
    const query = await fetch(server.url + "/api/auth/oauth2/authorize?client_id=%00&response_type=code");
    expect(query.status).toBe(400);
  });

  it("accepts the six characters \\u0000 written as text (an escaped backslash), and %2500", async () => {
    const res = await register({ client_name: "literally \\u0000 and %2500", redirect_uris: ["https://rp.example.com/cb"], token_endpoint_auth_method: "none" });
    expect(res.status, res.text).toBe(201);
    expect(res.json.client_name).toBe("literally \\u0000 and %2500");
  });
});

describe("registration rate limit", () => {
  it("limits registrations per IP and says when to retry", async () => {
    const limited = await startTestServer({ RATE_LIMIT_ENABLED: "true", REGISTER_RATE_LIMIT: "3", TRUST_PROXY: "true" });
    const ip = uniqueClientIp();
    try {
      const statuses: number[] = [];
      let last: Awaited<ReturnType<typeof limited.api>> | undefined;
      for (let i = 0; i < 5; i++) {
        last = await limited.api("/api/auth/oauth2/register", { body: { client_name: `n${i}`, redirect_uris: ["https://a.example/cb"] }, headers: { "x-forwarded-for": ip } });
        statuses.push(last.status);
      }
      expect(statuses.slice(0, 3)).toEqual([201, 201, 201]);
      expect(statuses.slice(3)).toEqual([429, 429]);
      expect(Number(last!.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(last!.json.error).toBeTypeOf("string");
      // Another client address still gets through.
      const other = await limited.api("/api/auth/oauth2/register", { body: { client_name: "other", redirect_uris: ["https://a.example/cb"] }, headers: { "x-forwarded-for": uniqueClientIp() } });
      expect(other.status).toBe(201);
    } finally {
      await limited.close();
    }
  });

  it("keys on the socket address: client-sent address headers do not evade the limit", async () => {
    const limited = await startTestServer({ RATE_LIMIT_ENABLED: "true", REGISTER_RATE_LIMIT: "2" });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        const spoof = uniqueClientIp();
        const res = await limited.api("/api/auth/oauth2/register", {
          body: { client_name: `s${i}`, redirect_uris: ["https://a.example/cb"] },
          headers: { "x-forwarded-for": spoof, "x-idp-client-ip": spoof, "x-real-ip": spoof },
        });
        statuses.push(res.status);
      }
      expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(2);
    } finally {
      await limited.close();
    }
  });
});
