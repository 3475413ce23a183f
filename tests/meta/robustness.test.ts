import { request } from "node:http";
import { beforeAll, describe, expect, it } from "vitest";
import { newIdentity, signRequest } from "../helpers/bap.js";
import { useTestServer } from "../helpers/fixtures.js";
import { authorize, pkce, REDIRECT, registerClient, signUp, token } from "../helpers/oauth.js";

/**
 * Robustness sweep: malformed input of every kind (bad JSON, wrong content types, wrong JSON
 * types, huge values, forged tokens, unknown ids, repeated parameters, odd unicode) gets a
 * clear 4xx, never a 500, a stack trace or a hang. OAuth endpoints answer RFC 6749 objects
 * ({error, error_description}); our own JSON routes answer RFC 9457 problem details.
 */

const server = useTestServer();
let person: Awaited<ReturnType<typeof signUp>>;
let publicClient: Awaited<ReturnType<typeof registerClient>>;
let confidential: Awaited<ReturnType<typeof registerClient>> & { basic: string };
let deviceClient: Awaited<ReturnType<typeof registerClient>>;
let accessToken: string;
let refreshToken: string;
let idToken: string;

const DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`;

beforeAll(async () => {
  person = await signUp(server);
  publicClient = await registerClient(server);
  const conf = await registerClient(server, {
    application_type: "web",
    token_endpoint_auth_method: "client_secret_basic",
    redirect_uris: ["https://rp.example.com/callback"],
    post_logout_redirect_uris: ["https://rp.example.com/logged-out"],
    grant_types: ["authorization_code", "refresh_token"],
  });
  confidential = { ...conf, basic: basic(conf.client_id, conf.client_secret!) };
  deviceClient = await registerClient(server, { redirect_uris: undefined, application_type: undefined, grant_types: [DEVICE_GRANT], response_types: [] });
  const { verifier, challenge } = pkce();
  const auth = await authorize(server, { clientId: publicClient.client_id, cookie: person.cookie, challenge });
  const tokens = await token(server, { grant_type: "authorization_code", code: auth.code!, redirect_uri: REDIRECT, client_id: publicClient.client_id, code_verifier: verifier });
  expect(tokens.status, tokens.text).toBe(200);
  ({ access_token: accessToken, refresh_token: refreshToken, id_token: idToken } = tokens.json);
}, 30_000);

// ---------------------------------------------------------------------------------------
// Plumbing: raw requests (node:http, so any header and byte sequence can be sent) and one
// assertion that names the case.

interface Res {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
}

interface Req {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Send the body chunked (no Content-Length). */
  chunked?: boolean;
}

function send(path: string, req: Req = {}): Promise<Res> {
  const url = new URL(server.url);
  const body = typeof req.body === "string" ? Buffer.from(req.body) : req.body;
  const headers: Record<string, string | number> = { origin: server.url, ...req.headers };
  if (body && !req.chunked) headers["content-length"] = body.length;
  return new Promise((resolve, reject) => {
    const r = request(
      { host: url.hostname, port: url.port, path, method: req.method ?? (body ? "POST" : "GET"), headers, timeout: 10_000, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let json: any = null;
          try {
            json = text ? JSON.parse(text) : null;
          } catch {
            json = null;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
        res.on("error", reject);
      },
    );
    r.on("timeout", () => r.destroy(new Error(`timeout (hang) on ${req.method ?? "GET"} ${path.slice(0, 120)}`)));
    r.on("error", reject);
    if (body && req.chunked) {
      // Two chunks, so the server cannot take it for one buffer.
      r.write(body.subarray(0, Math.floor(body.length / 2)));
      r.write(body.subarray(Math.floor(body.length / 2)));
    } else if (body) r.write(body);
    r.end();
  });
}

const FORM = { "content-type": "application/x-www-form-urlencoded" };
const JSON_TYPE = { "content-type": "application/json" };

/** A URL-encoded body from pairs, so a key can repeat. */
const form = (pairs: [string, string][] | Record<string, string>) => new URLSearchParams(Array.isArray(pairs) ? pairs : Object.entries(pairs)).toString();

type Kind = "oauth" | "problem" | "better-auth" | "any";

/**
 * The one check: below 500, no stack trace; an error status answers in the route's family
 * (RFC 6749 object on OAuth endpoints, problem+json on ours, better-auth's `{message, code}`
 * where asked, anything 4xx elsewhere).
 */
function expectClean(name: string, res: Res, kind: Kind) {
  const label = `${name} -> ${res.status} ${res.text.slice(0, 300)}`;
  expect.soft(res.status, label).toBeGreaterThanOrEqual(200);
  expect.soft(res.status, label).toBeLessThan(500);
  expect.soft(/\n\s+at [\w.<]|node_modules|\.(?:m?js|ts):\d+/.test(res.text), `stack trace in ${label}`).toBe(false);
  if (res.status < 400) return;
  const type = String(res.headers["content-type"] ?? "");
  if (kind === "oauth") {
    expect.soft(typeof res.json?.error, `RFC 6749 error in ${label}`).toBe("string");
    expect.soft(typeof res.json?.error_description, `RFC 6749 error_description in ${label}`).toBe("string");
  } else if (kind === "problem") {
    expect.soft(type, `problem+json in ${label}`).toContain("application/problem+json");
    expect.soft(res.json?.status, `problem status in ${label}`).toBe(res.status);
  } else if (kind === "better-auth") {
    expect.soft(type, `JSON in ${label}`).toContain("application/json");
    expect.soft(typeof res.json?.message, `better-auth message in ${label}`).toBe("string");
    expect.soft(typeof res.json?.code, `better-auth code in ${label}`).toBe("string");
  }
}

async function sweep(cases: [name: string, path: string, req: Req, kind: Kind][]) {
  for (const [name, path, req, kind] of cases) expectClean(name, await send(path, req), kind);
}

// ---------------------------------------------------------------------------------------
// Garbage values shared by the tables.

const b64url = (s: string) => Buffer.from(s).toString("base64url");
const FORGED_JWS = [
  "a.b.c",
  "...",
  "x..y",
  `${b64url('{"alg":"none"}')}.${b64url('{"sub":"x"}')}.`,
  `${b64url('{"alg":"RS256","kid":"nope"}')}.${b64url('{"sub":"x","exp":9999999999}')}.${b64url("sig")}`,
  `${b64url('{"alg":"HS256"}')}.${b64url("not json")}.${b64url("sig")}`,
  `${b64url("[]")}.${b64url("[]")}.${b64url("[]")}`,
  `${b64url('{"alg":"EdDSA","kid":null}')}.${b64url("{}")}.AAAA`,
  `${b64url('{"alg":"RS256"}')}.${b64url('{"exp":"tomorrow","iat":{},"aud":[1,2]}')}.@@@`,
  "eyJ.eyJ.eyJ",
  "a.b.c.d.e",
];
const GARBAGE_STRINGS = ["", " ", "\u0000", "\ud800", "💥".repeat(50), "%zz", "x".repeat(100_000), "'; DROP TABLE user; --", "../../../etc/passwd", "null", "[]", "{}"];
/** Values of the wrong JSON type for a string (or array) member. */
const WRONG_TYPES: unknown[] = [null, 0, -1, 1e308, true, [], ["x"], [1, 2], {}, { a: 1 }, "", "x".repeat(70_000)];

// ---------------------------------------------------------------------------------------

describe("POST /api/auth/oauth2/token", () => {
  const path = "/api/auth/oauth2/token";

  it("every grant type with missing, repeated, overlong and garbage parameters", async () => {
    const grants = ["authorization_code", "refresh_token", "client_credentials", DEVICE_GRANT, "password", "implicit", "", "\u0000", "x".repeat(10_000)];
    const cases: [string, string, Req, Kind][] = [];
    const pub = publicClient.client_id;
    for (const grant of grants) {
      const g = `grant_type=${JSON.stringify(grant.slice(0, 40))}`;
      cases.push([`${g} alone`, path, { headers: FORM, body: form({ grant_type: grant }) }, "oauth"]);
      cases.push([`${g} public client only`, path, { headers: FORM, body: form({ grant_type: grant, client_id: pub }) }, "oauth"]);
      cases.push([`${g} repeated grant_type`, path, { headers: FORM, body: form([["grant_type", grant], ["grant_type", "refresh_token"], ["client_id", pub]]) }, "oauth"]);
      cases.push([`${g} repeated client_id`, path, { headers: FORM, body: form([["grant_type", grant], ["client_id", pub], ["client_id", confidential.client_id]]) }, "oauth"]);
      cases.push([`${g} array-ish keys`, path, { headers: FORM, body: `grant_type[]=${encodeURIComponent(grant)}&client_id[]=${pub}&code[0]=x&refresh_token[a]=b` }, "oauth"]);
      cases.push([`${g} JSON body with arrays`, path, { headers: JSON_TYPE, body: JSON.stringify({ grant_type: [grant], client_id: [pub], code: ["x"], refresh_token: ["y"] }) }, "oauth"]);
      cases.push([`${g} JSON body with objects`, path, { headers: JSON_TYPE, body: JSON.stringify({ grant_type: { a: grant }, client_id: { id: pub }, code: {}, scope: {} }) }, "oauth"]);
      cases.push([`${g} JSON body with numbers`, path, { headers: JSON_TYPE, body: JSON.stringify({ grant_type: grant, client_id: 1, code: 2, refresh_token: 3, code_verifier: 4, scope: 5, device_code: 6, redirect_uri: 7 }) }, "oauth"]);
      cases.push([`${g} JSON null members`, path, { headers: JSON_TYPE, body: JSON.stringify({ grant_type: grant, client_id: null, code: null, refresh_token: null, device_code: null }) }, "oauth"]);
      for (const value of GARBAGE_STRINGS) {
        const v = JSON.stringify(value.slice(0, 20));
        cases.push([
          `${g} garbage ${v} in every parameter`,
          path,
          {
            headers: FORM,
            body: form({ grant_type: grant, client_id: value, client_secret: value, code: value, code_verifier: value, redirect_uri: value, refresh_token: value, scope: value, device_code: value, resource: value }),
          },
          "oauth",
        ]);
        cases.push([
          `${g} garbage ${v} with a real public client`,
          path,
          { headers: FORM, body: form({ grant_type: grant, client_id: pub, code: value, code_verifier: value, redirect_uri: value, refresh_token: value, scope: value, device_code: value, resource: value }) },
          "oauth",
        ]);
        cases.push([
          `${g} garbage ${v} with a confidential client`,
          path,
          { headers: { ...FORM, authorization: confidential.basic }, body: form({ grant_type: grant, code: value, code_verifier: value, redirect_uri: value, refresh_token: value, scope: value, device_code: value, resource: value }) },
          "oauth",
        ]);
      }
      for (const forged of FORGED_JWS) {
        cases.push([`${g} forged JWS ${forged.slice(0, 30)} as every token`, path, { headers: FORM, body: form({ grant_type: grant, client_id: pub, code: forged, refresh_token: forged, device_code: forged, code_verifier: forged, client_assertion: forged, client_assertion_type: "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" }) }, "oauth"]);
      }
      cases.push([`${g} a real access token as the refresh token`, path, { headers: FORM, body: form({ grant_type: grant, client_id: pub, refresh_token: accessToken, code: accessToken }) }, "oauth"]);
      cases.push([`${g} the id token as code`, path, { headers: FORM, body: form({ grant_type: grant, client_id: pub, code: idToken, refresh_token: idToken, device_code: idToken }) }, "oauth"]);
    }
    cases.push(["refresh_token repeated with the real one", path, { headers: FORM, body: form([["grant_type", "refresh_token"], ["client_id", publicClient.client_id], ["refresh_token", "nope"], ["refresh_token", refreshToken]]) }, "oauth"]);
    cases.push(["refresh_token scope garbage", path, { headers: FORM, body: form({ grant_type: "refresh_token", client_id: publicClient.client_id, refresh_token: "nope", scope: "openid \u0000 x".repeat(500) }) }, "oauth"]);
    cases.push(["device_code grant for the device client, unknown code", path, { headers: FORM, body: form({ grant_type: DEVICE_GRANT, client_id: deviceClient.client_id, device_code: "nope" }) }, "oauth"]);
    cases.push(["client_credentials with garbage scope and resource", path, { headers: { ...FORM, authorization: confidential.basic }, body: form([["grant_type", "client_credentials"], ["scope", "\ud800 ".repeat(1000)], ["resource", "not a url"], ["resource", "https://x/"]]) }, "oauth"]);
    await sweep(cases);
  }, 60_000);

  it("bodies that are not forms", async () => {
    await sweep([
      ["no body, no content type", path, { method: "POST" }, "oauth"],
      ["empty form", path, { headers: FORM, body: "" }, "oauth"],
      ["empty JSON", path, { headers: JSON_TYPE, body: "" }, "oauth"],
      ["malformed JSON", path, { headers: JSON_TYPE, body: "{grant_type:" }, "oauth"],
      ["JSON array", path, { headers: JSON_TYPE, body: "[]" }, "oauth"],
      ["JSON string", path, { headers: JSON_TYPE, body: '"grant_type=refresh_token"' }, "oauth"],
      ["JSON number", path, { headers: JSON_TYPE, body: "42" }, "oauth"],
      ["JSON null", path, { headers: JSON_TYPE, body: "null" }, "oauth"],
      ["JSON __proto__", path, { headers: JSON_TYPE, body: '{"__proto__":{"grant_type":"refresh_token"},"constructor":{"prototype":{}}}' }, "oauth"],
      ["text/plain", path, { headers: { "content-type": "text/plain" }, body: "grant_type=refresh_token" }, "oauth"],
      ["multipart without boundary", path, { headers: { "content-type": "multipart/form-data" }, body: "grant_type=refresh_token" }, "oauth"],
      ["multipart with junk", path, { headers: { "content-type": "multipart/form-data; boundary=x" }, body: "--x\r\nContent-Disposition: form-data; name=grant_type\r\n\r\nrefresh_token\r\n--x--" }, "oauth"],
      ["content type garbage", path, { headers: { "content-type": "\u00ff/\u00fe; charset=🙃".replace("🙃", "x") }, body: "a=b" }, "oauth"],
      ["form with invalid UTF-8 bytes", path, { headers: FORM, body: Buffer.from([0x67, 0x72, 0x61, 0x6e, 0x74, 0x5f, 0x74, 0x79, 0x70, 0x65, 0x3d, 0xff, 0xfe, 0xc0, 0x80]) }, "oauth"],
      ["form with bad percent-encoding", path, { headers: FORM, body: "grant_type=%E0%A4%A&client_id=%zz%&code=%" }, "oauth"],
      ["form of only separators", path, { headers: FORM, body: "&&&===&=&" }, "oauth"],
      ["form with 5000 parameters", path, { headers: FORM, body: Array.from({ length: 5000 }, (_, i) => `p${i}=${i}`).join("&") }, "oauth"],
      ["form with a 900 KB value", path, { headers: FORM, body: form({ grant_type: "authorization_code", client_id: publicClient.client_id, code: "c".repeat(900_000) }) }, "oauth"],
      ["form over the body limit", path, { headers: FORM, body: "a=" + "x".repeat(1_100_000) }, "any"],
      ["JSON with a lone surrogate escape", path, { headers: JSON_TYPE, body: '{"grant_type":"\\ud800","client_id":"\\udfff"}' }, "oauth"],
      ["JSON deeply nested", path, { headers: JSON_TYPE, body: "[".repeat(5000) + "]".repeat(5000) }, "oauth"],
      ["GET instead of POST", `${path}?grant_type=refresh_token`, { method: "GET" }, "any"],
      ["PUT", path, { method: "PUT", headers: FORM, body: "grant_type=refresh_token" }, "any"],
    ]);
  });

  it("bad client authentication headers", async () => {
    const body = form({ grant_type: "client_credentials" });
    const headers = [
      "Basic",
      "Basic ",
      "Basic    ",
      "Basic !!!!not-base64!!!!",
      "Basic " + Buffer.from("no-colon-here").toString("base64"),
      "Basic " + Buffer.from(":").toString("base64"),
      "Basic " + Buffer.from(`${confidential.client_id}:`).toString("base64"),
      "Basic " + Buffer.from(`:${confidential.client_secret}`).toString("base64"),
      "Basic " + Buffer.from(`${confidential.client_id}:wrong`).toString("base64"),
      "Basic " + Buffer.from("%zz:%E0%A4%A").toString("base64"),
      "Basic " + Buffer.from("\u0000:\u0000").toString("base64"),
      "Basic " + Buffer.from([0xff, 0xfe, 0x3a, 0xc0, 0x80]).toString("base64"),
      "Basic " + Buffer.from(`${"a".repeat(4000)}:${"b".repeat(4000)}`).toString("base64"),
      "Basic " + "A".repeat(12_000),
      "Basic " + "=".repeat(100),
      "Basic a b c",
      "basic " + Buffer.from(`${confidential.client_id}:${confidential.client_secret}`).toString("base64").toLowerCase(),
      "Bearer " + accessToken,
      "Bearer",
      "Digest username=x",
      "Basic\t" + Buffer.from("a:b").toString("base64"),
      "x".repeat(12_000),
    ];
    const cases: [string, string, Req, Kind][] = [];
    for (const authorization of headers) {
      const name = `authorization ${JSON.stringify(authorization.slice(0, 40))}${authorization.length > 40 ? `… (${authorization.length})` : ""}`;
      cases.push([`token: ${name}`, path, { headers: { ...FORM, authorization }, body }, "oauth"]);
      cases.push([`token + client_id in body: ${name}`, path, { headers: { ...FORM, authorization }, body: form({ grant_type: "refresh_token", refresh_token: "x", client_id: publicClient.client_id }) }, "oauth"]);
      cases.push([`introspect: ${name}`, "/api/auth/oauth2/introspect", { headers: { ...FORM, authorization }, body: form({ token: accessToken }) }, "oauth"]);
      cases.push([`revoke: ${name}`, "/api/auth/oauth2/revoke", { headers: { ...FORM, authorization }, body: form({ token: "x" }) }, "oauth"]);
    }
    cases.push(["basic and client_secret_post together", path, { headers: { ...FORM, authorization: confidential.basic }, body: form({ grant_type: "client_credentials", client_id: confidential.client_id, client_secret: "other" }) }, "oauth"]);
    cases.push(["secret in body for a basic client, client_id repeated", path, { headers: FORM, body: form([["grant_type", "client_credentials"], ["client_id", confidential.client_id], ["client_id", "x"], ["client_secret", confidential.client_secret!], ["client_secret", "y"]]) }, "oauth"]);
    cases.push(["X-Auth-Token garbage", path, { headers: { ...FORM, "x-auth-token": "garbage|||" }, body: form({ grant_type: "refresh_token", client_id: publicClient.client_id, refresh_token: "x" }) }, "oauth"]);
    cases.push(["header over the server's header limit", path, { headers: { ...FORM, authorization: "Basic " + "A".repeat(70_000) }, body }, "any"]);
    await sweep(cases);
  });
});

describe("introspection and revocation", () => {
  it("token parameters of every shape", async () => {
    const cases: [string, string, Req, Kind][] = [];
    for (const endpoint of ["/api/auth/oauth2/introspect", "/api/auth/oauth2/revoke"]) {
      const auth = { ...FORM, authorization: confidential.basic };
      const tokens = [...FORGED_JWS, ...GARBAGE_STRINGS, accessToken, refreshToken, idToken, `${accessToken}.x`, `${idToken}x`, "x".repeat(10_000)];
      for (const value of tokens) {
        for (const hint of [undefined, "access_token", "refresh_token", "id_token", "\u0000", "x".repeat(5000)]) {
          const fields = { token: value, ...(hint !== undefined ? { token_type_hint: hint } : {}) };
          cases.push([`${endpoint} token=${JSON.stringify(value.slice(0, 30))} hint=${JSON.stringify(hint?.slice(0, 20))}`, endpoint, { headers: auth, body: form(fields) }, "oauth"]);
        }
        cases.push([`${endpoint} public client token=${JSON.stringify(value.slice(0, 30))}`, endpoint, { headers: FORM, body: form({ token: value, client_id: publicClient.client_id }) }, "oauth"]);
        cases.push([`${endpoint} no client token=${JSON.stringify(value.slice(0, 30))}`, endpoint, { headers: FORM, body: form({ token: value }) }, "oauth"]);
      }
      cases.push([`${endpoint} missing token`, endpoint, { headers: auth, body: form({}) }, "oauth"]);
      cases.push([`${endpoint} repeated token`, endpoint, { headers: auth, body: form([["token", accessToken], ["token", "x"]]) }, "oauth"]);
      cases.push([`${endpoint} array-ish token`, endpoint, { headers: auth, body: "token[]=a&token[]=b&token_type_hint[x]=y" }, "oauth"]);
      cases.push([`${endpoint} JSON token as array`, endpoint, { headers: { ...JSON_TYPE, authorization: confidential.basic }, body: JSON.stringify({ token: [accessToken] }) }, "oauth"]);
      cases.push([`${endpoint} JSON token as object`, endpoint, { headers: { ...JSON_TYPE, authorization: confidential.basic }, body: JSON.stringify({ token: { a: 1 }, token_type_hint: 5 }) }, "oauth"]);
      cases.push([`${endpoint} JSON token as number`, endpoint, { headers: { ...JSON_TYPE, authorization: confidential.basic }, body: JSON.stringify({ token: 12345, token_type_hint: ["access_token"] }) }, "oauth"]);
      cases.push([`${endpoint} malformed JSON`, endpoint, { headers: { ...JSON_TYPE, authorization: confidential.basic }, body: "{" }, "oauth"]);
      cases.push([`${endpoint} text/plain`, endpoint, { headers: { "content-type": "text/plain", authorization: confidential.basic }, body: "token=x" }, "oauth"]);
      cases.push([`${endpoint} no body`, endpoint, { method: "POST", headers: { authorization: confidential.basic } }, "oauth"]);
      cases.push([`${endpoint} invalid UTF-8`, endpoint, { headers: auth, body: Buffer.concat([Buffer.from("token="), Buffer.from([0xff, 0xfe, 0xfd])]) }, "oauth"]);
      cases.push([`${endpoint} GET`, `${endpoint}?token=x`, { method: "GET" }, "any"]);
    }
    await sweep(cases);
  }, 30_000);
});

describe("GET /api/auth/oauth2/userinfo", () => {
  it("Authorization header variants", async () => {
    const values = [
      "Bearer",
      "Bearer ",
      "Bearer  x",
      "Bearer x y",
      "bearer " + accessToken,
      "BEARER " + accessToken,
      `Bearer ${accessToken} `,
      `Bearer  ${accessToken}`,
      "Basic " + Buffer.from("a:b").toString("base64"),
      confidential.basic,
      "Bearer " + idToken,
      "Bearer " + refreshToken,
      "Bearer " + person.token,
      "Bearer " + "x".repeat(10 * 1024),
      "Bearer " + "a.".repeat(5 * 1024) + "a",
      ...FORGED_JWS.map((t) => `Bearer ${t}`),
      "Bearer \u00ff\u00fe",
      "DPoP " + accessToken,
      "x",
      "",
    ];
    const cases: [string, string, Req, Kind][] = [];
    for (const authorization of values) {
      const name = JSON.stringify(authorization.slice(0, 50));
      cases.push([`GET userinfo authorization ${name}`, "/api/auth/oauth2/userinfo", { headers: { authorization } }, "oauth"]);
      cases.push([`POST userinfo authorization ${name}`, "/api/auth/oauth2/userinfo", { method: "POST", headers: { authorization } }, "oauth"]);
    }
    cases.push(["userinfo without a header", "/api/auth/oauth2/userinfo", {}, "oauth"]);
    cases.push(["userinfo access_token in query", `/api/auth/oauth2/userinfo?access_token=${encodeURIComponent(FORGED_JWS[4]!)}`, {}, "oauth"]);
    cases.push(["userinfo access_token in form", "/api/auth/oauth2/userinfo", { headers: FORM, body: form({ access_token: FORGED_JWS[4]! }) }, "oauth"]);
    cases.push(["userinfo repeated Authorization", "/api/auth/oauth2/userinfo", { headers: { authorization: `Bearer ${accessToken}, Bearer x` } }, "oauth"]);
    cases.push(["userinfo with a garbage session cookie", "/api/auth/oauth2/userinfo", { headers: { cookie: "better-auth.session_token=garbage.sig" } }, "oauth"]);
    await sweep(cases);
  });
});

describe("POST /api/auth/oauth2/register", () => {
  const path = "/api/auth/oauth2/register";
  const valid = {
    client_name: "Robust",
    redirect_uris: [REDIRECT],
    token_endpoint_auth_method: "none",
    grant_types: ["authorization_code"],
    response_types: ["code"],
  };
  const fields = [
    "client_name",
    "redirect_uris",
    "post_logout_redirect_uris",
    "token_endpoint_auth_method",
    "grant_types",
    "response_types",
    "scope",
    "client_uri",
    "logo_uri",
    "tos_uri",
    "policy_uri",
    "contacts",
    "software_id",
    "software_version",
    "software_statement",
    "jwks",
    "jwks_uri",
    "application_type",
    "subject_type",
    "type",
    "disabled",
    "skip_consent",
    "enable_end_session",
    "require_pkce",
    "metadata",
    "client_id",
    "client_secret",
    "client_secret_expires_at",
    "member_pubkey",
    "owner_bap_id",
    "id_token_signed_response_alg",
    "userinfo_signed_response_alg",
    "default_max_age",
    "require_auth_time",
  ];

  it("wrong types in every metadata field", async () => {
    const cases: [string, string, Req, Kind][] = [];
    for (const field of fields) {
      for (const value of WRONG_TYPES) {
        cases.push([`register ${field}=${JSON.stringify(value)?.slice(0, 30)}`, path, { headers: JSON_TYPE, body: JSON.stringify({ ...valid, [field]: value }) }, "oauth"]);
      }
      cases.push([`register ${field} odd unicode`, path, { headers: JSON_TYPE, body: JSON.stringify({ ...valid, [field]: "\u0000\u202e\ufeff💥" }).replace("\\u0000", "\\ud800\\u0000") }, "oauth"]);
    }
    await sweep(cases);
  }, 60_000);

  it("huge arrays, bad redirect URIs, member key garbage", async () => {
    const badUris = ["not a url", "", "javascript:alert(1)", "data:text/html,x", "http://evil.example.com/cb", "https://x/cb#frag", "https://", "//x/cb", "http://[::1", "https://x/\u0000", "https://xn--/", "https://" + "a".repeat(5000) + ".com/", "file:///etc/passwd", "HTTPS://RP.EXAMPLE.COM/CB", "https://user:pass@x/cb", "http://localhost:99999/cb", "custom.scheme:/cb", "https://x/%zz"];
    const cases: [string, string, Req, Kind][] = [];
    for (const uri of badUris) {
      const name = JSON.stringify(uri.slice(0, 40));
      cases.push([`register redirect_uris [${name}]`, path, { headers: JSON_TYPE, body: JSON.stringify({ ...valid, redirect_uris: [uri] }) }, "oauth"]);
      cases.push([`register web redirect_uris [${name}]`, path, { headers: JSON_TYPE, body: JSON.stringify({ ...valid, application_type: "web", redirect_uris: [uri] }) }, "oauth"]);
      cases.push([`register post_logout_redirect_uris [${name}]`, path, { headers: JSON_TYPE, body: JSON.stringify({ ...valid, post_logout_redirect_uris: [uri] }) }, "oauth"]);
      cases.push([`register client_uri ${name}`, path, { headers: JSON_TYPE, body: JSON.stringify({ ...valid, client_uri: uri, logo_uri: uri, jwks_uri: uri }) }, "oauth"]);
    }
    const big = (n: number, f: (i: number) => unknown) => Array.from({ length: n }, (_, i) => f(i));
    cases.push(["register 10000 redirect URIs", path, { headers: JSON_TYPE, body: JSON.stringify({ ...valid, redirect_uris: big(10_000, (i) => `http://127.0.0.1:9999/cb${i}`) }) }, "oauth"]);
    cases.push(["register 10000 grant types", path, { headers: JSON_TYPE, body: JSON.stringify({ ...valid, grant_types: big(10_000, () => "authorization_code") }) }, "oauth"]);
    cases.push(["register 10000 contacts", path, { headers: JSON_TYPE, body: JSON.stringify({ ...valid, contacts: big(10_000, (i) => `a${i}@example.com`) }) }, "oauth"]);
    cases.push(["register nested arrays", path, { headers: JSON_TYPE, body: JSON.stringify({ ...valid, redirect_uris: [[REDIRECT]], grant_types: [["authorization_code"]], response_types: [{}] }) }, "oauth"]);
    cases.push(["register empty arrays", path, { headers: JSON_TYPE, body: JSON.stringify({ ...valid, redirect_uris: [], grant_types: [], response_types: [] }) }, "oauth"]);
    cases.push(["register unknown grant type", path, { headers: JSON_TYPE, body: JSON.stringify({ ...valid, grant_types: ["urn:x", "\u0000"] }) }, "oauth"]);
    cases.push(["register scope 10000 words", path, { headers: JSON_TYPE, body: JSON.stringify({ ...valid, scope: big(10_000, (i) => `s${i}`).join(" ") }) }, "oauth"]);
    cases.push(["register client_name 100 KB", path, { headers: JSON_TYPE, body: JSON.stringify({ ...valid, client_name: "n".repeat(100_000) }) }, "oauth"]);
    cases.push(["register body 900 KB", path, { headers: JSON_TYPE, body: JSON.stringify({ ...valid, metadata: { x: "y".repeat(900_000) } }) }, "oauth"]);

    const id = newIdentity();
    const keys = ["", "00", "zz", "02" + "0".repeat(64), "04" + "a".repeat(128), "02" + "f".repeat(64), id.pubkey.toUpperCase(), id.pubkey + "00", id.pubkey.slice(0, 20), "x".repeat(10_000), "\u0000"];
    for (const key of keys) {
      cases.push([`register member_pubkey ${JSON.stringify(key.slice(0, 30))}`, path, { headers: JSON_TYPE, body: JSON.stringify({ ...valid, member_pubkey: key }) }, "oauth"]);
      cases.push([`register member_pubkey ${JSON.stringify(key.slice(0, 30))} + owner_bap_id garbage`, path, { headers: JSON_TYPE, body: JSON.stringify({ ...valid, member_pubkey: key, owner_bap_id: "not-a-bap-id" }) }, "oauth"]);
    }
    cases.push([`register owner_bap_id without member key`, path, { headers: JSON_TYPE, body: JSON.stringify({ ...valid, owner_bap_id: id.bapId }) }, "oauth"]);
    cases.push([`register owner_bap_id not matching key`, path, { headers: JSON_TYPE, body: JSON.stringify({ ...valid, member_pubkey: id.pubkey, owner_bap_id: newIdentity().bapId }) }, "oauth"]);
    cases.push([`register owner_bap_id huge`, path, { headers: JSON_TYPE, body: JSON.stringify({ ...valid, member_pubkey: id.pubkey, owner_bap_id: "1".repeat(50_000) }) }, "oauth"]);
    await sweep(cases);
  }, 60_000);

  it("bodies that are not JSON objects", async () => {
    await sweep([
      ["register malformed JSON", path, { headers: JSON_TYPE, body: "{" }, "oauth"],
      ["register empty body", path, { headers: JSON_TYPE, body: "" }, "oauth"],
      ["register no body", path, { method: "POST" }, "oauth"],
      ["register array", path, { headers: JSON_TYPE, body: "[]" }, "oauth"],
      ["register number", path, { headers: JSON_TYPE, body: "1" }, "oauth"],
      ["register string", path, { headers: JSON_TYPE, body: '"x"' }, "oauth"],
      ["register null", path, { headers: JSON_TYPE, body: "null" }, "oauth"],
      ["register __proto__", path, { headers: JSON_TYPE, body: JSON.stringify(valid).replace("{", '{"__proto__":{"token_endpoint_auth_method":"client_secret_basic"},') }, "oauth"],
      ["register form body", path, { headers: FORM, body: form({ client_name: "x", redirect_uris: REDIRECT }) }, "oauth"],
      ["register text/plain", path, { headers: { "content-type": "text/plain" }, body: JSON.stringify(valid) }, "oauth"],
      ["register invalid UTF-8", path, { headers: JSON_TYPE, body: Buffer.concat([Buffer.from('{"client_name":"'), Buffer.from([0xff, 0xfe]), Buffer.from('","redirect_uris":["' + REDIRECT + '"]}')]) }, "oauth"],
      ["register lone surrogate", path, { headers: JSON_TYPE, body: JSON.stringify(valid).replace('"Robust"', '"\\ud800"') }, "oauth"],
      ["register over the body limit", path, { headers: JSON_TYPE, body: JSON.stringify({ x: "y".repeat(1_100_000) }) }, "any"],
      ["register with a bearer garbage", path, { headers: { ...JSON_TYPE, authorization: `Bearer ${FORGED_JWS[4]}` }, body: JSON.stringify(valid) }, "oauth"],
      ["register with a garbage cookie", path, { headers: { ...JSON_TYPE, cookie: "better-auth.session_token=%zz" }, body: JSON.stringify(valid) }, "oauth"],
    ]);
  });
});

describe("GET /api/auth/oauth2/authorize", () => {
  const path = "/api/auth/oauth2/authorize";
  it("garbage query parameters, signed in and not", async () => {
    const { challenge } = pkce();
    const base = { response_type: "code", client_id: publicClient.client_id, redirect_uri: REDIRECT, scope: "openid", state: "s", code_challenge: challenge, code_challenge_method: "S256" };
    const queries: string[] = [
      "",
      "client_id=",
      "client_id=nope",
      "client_id=%zz",
      "client_id=%E0%A4%A",
      `client_id=${"x".repeat(6000)}`,
      "response_type=code&client_id[]=x",
      "a=%00&b=%ud800",
    ];
    for (const [key] of Object.entries(base)) {
      for (const value of ["", "\u0000", "\ud83d", "x".repeat(6000), "%zz", "token id_token", "none"]) {
        queries.push(new URLSearchParams({ ...base, [key]: value }).toString());
      }
      queries.push(new URLSearchParams([...Object.entries(base), [key, "second"]]).toString());
    }
    const extras: Record<string, string>[] = [
      { prompt: "login consent none select_account bogus" },
      { prompt: "\u0000" },
      { max_age: "-1" },
      { max_age: "1e309" },
      { max_age: "NaN" },
      { max_age: "x".repeat(500) },
      { nonce: "n".repeat(6000) },
      { request: FORGED_JWS[4]! },
      { request_uri: "urn:ietf:params:oauth:request_uri:nope" },
      { id_token_hint: FORGED_JWS[4]! },
      { login_hint: "\u0000" },
      { ui_locales: "💥" },
      { resource: "not a url" },
      { claims: "{not json" },
      { response_mode: "form_post" },
      { response_mode: "\u0000" },
      { code_challenge: "short" },
      { code_challenge_method: "S512" },
      { scope: "openid ".repeat(2000) },
      { scope: "offline_access" },
      { exp: "1", sig: "garbage" },
    ];
    for (const extra of extras) {
      queries.push(new URLSearchParams({ ...base, ...extra }).toString());
    }
    const cases: [string, string, Req, Kind][] = [];
    for (const q of queries) {
      const name = q.slice(0, 80);
      cases.push([`authorize (anonymous) ?${name}`, `${path}?${q}`, {}, "any"]);
      cases.push([`authorize (signed in) ?${name}`, `${path}?${q}`, { headers: { cookie: person.cookie } }, "any"]);
      cases.push([`authorize (signed in, html) ?${name}`, `${path}?${q}`, { headers: { cookie: person.cookie, accept: "text/html" } }, "any"]);
    }
    cases.push(["authorize POST form", path, { headers: { ...FORM, cookie: person.cookie }, body: form(base) }, "any"]);
    cases.push(["authorize POST JSON array", path, { headers: { ...JSON_TYPE, cookie: person.cookie }, body: "[]" }, "any"]);
    cases.push(["authorize with a garbage cookie", `${path}?${new URLSearchParams(base)}`, { headers: { cookie: "better-auth.session_token=a.b; better-auth.session_data=%zz" } }, "any"]);
    await sweep(cases);
  }, 60_000);

  it("consent and continue endpoints with garbage", async () => {
    const cases: [string, string, Req, Kind][] = [];
    for (const body of [{}, { accept: "yes" }, { accept: true }, { accept: true, oauth_query: "" }, { accept: true, oauth_query: "a=%zz" }, { accept: true, oauth_query: ["x"] }, { accept: [], oauth_query: {} }, { accept: true, oauth_query: "client_id=x&sig=y&exp=1" }, { accept: true, scope: 5, oauth_query: "x".repeat(100_000) }]) {
      cases.push([`consent ${JSON.stringify(body).slice(0, 60)}`, "/api/auth/oauth2/consent", { headers: { ...JSON_TYPE, cookie: person.cookie }, body: JSON.stringify(body) }, "any"]);
      cases.push([`continue ${JSON.stringify(body).slice(0, 60)}`, "/api/auth/oauth2/continue", { headers: { ...JSON_TYPE, cookie: person.cookie }, body: JSON.stringify({ ...body, selected: "x", created: 1, postLogin: {} }) }, "any"]);
    }
    cases.push(["consent malformed JSON", "/api/auth/oauth2/consent", { headers: { ...JSON_TYPE, cookie: person.cookie }, body: "{" }, "any"]);
    cases.push(["consent anonymous", "/api/auth/oauth2/consent", { headers: JSON_TYPE, body: JSON.stringify({ accept: true, oauth_query: "x=y" }) }, "any"]);
    await sweep(cases);
  });
});

describe("GET /api/auth/oauth2/end-session", () => {
  it("id_token_hint, redirect and client garbage", async () => {
    const path = "/api/auth/oauth2/end-session";
    const hints = [...FORGED_JWS, "", "x".repeat(10_000), accessToken, refreshToken, idToken + "x", "%zz"];
    const cases: [string, string, Req, Kind][] = [];
    for (const hint of hints) {
      const extras: Record<string, string>[] = [{}, { client_id: confidential.client_id }, { client_id: "nope" }, { post_logout_redirect_uri: "https://evil.example.com/", state: "s" }, { post_logout_redirect_uri: "not a url", client_id: publicClient.client_id }];
      for (const extra of extras) {
        const q = new URLSearchParams({ id_token_hint: hint, ...extra }).toString();
        cases.push([`end-session ?${q.slice(0, 80)}`, `${path}?${q}`, {}, "any"]);
        cases.push([`end-session (signed in) ?${q.slice(0, 80)}`, `${path}?${q}`, { headers: { cookie: person.cookie } }, "any"]);
      }
    }
    cases.push(["end-session repeated id_token_hint", `${path}?id_token_hint=${idToken}&id_token_hint=x`, {}, "any"]);
    cases.push(["end-session with the real hint and a bad redirect", `${path}?${new URLSearchParams({ id_token_hint: idToken, post_logout_redirect_uri: "javascript:alert(1)" })}`, {}, "any"]);
    cases.push(["end-session no params", path, {}, "any"]);
    cases.push(["end-session POST form garbage", path, { headers: FORM, body: "id_token_hint=%zz&id_token_hint[]=1" }, "any"]);
    cases.push(["end-session POST JSON wrong types", path, { headers: JSON_TYPE, body: JSON.stringify({ id_token_hint: 1, client_id: [], post_logout_redirect_uri: {} }) }, "any"]);
    cases.push(["end-session/confirm garbage", "/api/auth/oauth2/end-session/confirm", { headers: JSON_TYPE, body: JSON.stringify({ accept: "x", id_token_hint: [] }) }, "any"]);
    await sweep(cases);
  });
});

describe("device authorization", () => {
  it("device code, verification, approve and deny", async () => {
    const cases: [string, string, Req, Kind][] = [];
    const code = "/api/auth/device/code";
    for (const body of [
      form({}),
      form({ client_id: "nope" }),
      form({ client_id: deviceClient.client_id, scope: "\u0000".repeat(100) }),
      form({ client_id: publicClient.client_id }),
      form([["client_id", deviceClient.client_id], ["client_id", "x"]]),
      form({ client_id: "x".repeat(100_000) }),
      "client_id[]=a&scope[x]=b",
      "client_id=%zz",
    ]) {
      cases.push([`device/code form ${body.slice(0, 60)}`, code, { headers: FORM, body }, "oauth"]);
    }
    for (const body of ["{", "[]", "null", JSON.stringify({ client_id: 1 }), JSON.stringify({ client_id: [deviceClient.client_id] }), JSON.stringify({ client_id: {}, scope: [] })]) {
      cases.push([`device/code JSON ${body.slice(0, 60)}`, code, { headers: JSON_TYPE, body }, "oauth"]);
    }
    cases.push(["device/code text/plain", code, { headers: { "content-type": "text/plain" }, body: "client_id=x" }, "oauth"]);
    cases.push(["device/code no body", code, { method: "POST" }, "oauth"]);
    cases.push(["device/code bad basic", code, { headers: { ...FORM, authorization: "Basic !!!" }, body: form({ client_id: deviceClient.client_id }) }, "oauth"]);

    for (const userCode of ["", "x", "\u0000", "%zz", "💥💥", "x".repeat(10_000), "ABCD-EFGH", "abcd efgh"]) {
      const q = `user_code=${encodeURIComponent(userCode)}`;
      cases.push([`GET /api/auth/device ?${q.slice(0, 50)}`, `/api/auth/device?${q}`, {}, "any"]);
      cases.push([`GET /api/auth/device (signed in) ?${q.slice(0, 50)}`, `/api/auth/device?${q}`, { headers: { cookie: person.cookie } }, "any"]);
      cases.push([`GET /device page ?${q.slice(0, 50)}`, `/device?${q}`, { headers: { cookie: person.cookie } }, "any"]);
      cases.push([`POST /device page user_code=${q.slice(0, 50)}`, "/device", { headers: { ...FORM, cookie: person.cookie }, body: form({ user_code: userCode, action: "approve" }) }, "any"]);
    }
    cases.push(["GET /api/auth/device repeated user_code", "/api/auth/device?user_code=a&user_code=b", { headers: { cookie: person.cookie } }, "any"]);
    cases.push(["GET /api/auth/device no user_code", "/api/auth/device", { headers: { cookie: person.cookie } }, "any"]);
    cases.push(["POST /device page garbage form", "/device", { headers: { ...FORM, cookie: person.cookie }, body: "user_code[]=1&user_code=%zz&action=%00" }, "any"]);
    cases.push(["POST /device page JSON", "/device", { headers: { ...JSON_TYPE, cookie: person.cookie }, body: '{"user_code":[1]}' }, "any"]);
    for (const action of ["approve", "deny"]) {
      const p = `/api/auth/device/${action}`;
      for (const body of [{}, { userCode: 1 }, { userCode: [] }, { userCode: {} }, { userCode: "nope" }, { userCode: "x".repeat(100_000) }, { userCode: "\u0000" }]) {
        cases.push([`${p} ${JSON.stringify(body).slice(0, 50)}`, p, { headers: { ...JSON_TYPE, cookie: person.cookie }, body: JSON.stringify(body) }, "any"]);
        cases.push([`${p} anonymous ${JSON.stringify(body).slice(0, 50)}`, p, { headers: JSON_TYPE, body: JSON.stringify(body) }, "any"]);
      }
      cases.push([`${p} malformed JSON`, p, { headers: { ...JSON_TYPE, cookie: person.cookie }, body: "{" }, "any"]);
      cases.push([`${p} form`, p, { headers: { ...FORM, cookie: person.cookie }, body: "userCode[]=x" }, "any"]);
    }
    await sweep(cases);
  });
});

describe("sessions and better-auth's account surface", () => {
  it("GET /api/auth/get-session with garbage cookies and bearers", async () => {
    const sessionToken = person.cookie.match(/better-auth\.session_token=([^;]+)/)?.[1] ?? "";
    const cookies = [
      "better-auth.session_token=",
      "better-auth.session_token=garbage",
      "better-auth.session_token=a.b",
      "better-auth.session_token=%zz",
      "better-auth.session_token=%E0%A4%A",
      `better-auth.session_token=${"x".repeat(6000)}.${"y".repeat(44)}`,
      `better-auth.session_token=${sessionToken}x`,
      `better-auth.session_token=${sessionToken}; better-auth.session_token=x`,
      `better-auth.session_token=${sessionToken}; better-auth.session_data=garbage`,
      `better-auth.session_token=${sessionToken}; better-auth.session_data=${b64url('{"session":null}')}`,
      `better-auth.session_token=${sessionToken}; better-auth.session_data=${b64url("[]")}`,
      `better-auth.session_token=${sessionToken}; better-auth.session_data=${FORGED_JWS[4]}`,
      `better-auth.session_data=${b64url('{"session":{"session":{},"user":{}},"expiresAt":9999999999999,"signature":"x"}')}`,
      "better-auth.dont_remember=garbage",
      "=; ; ;;=;",
      "\u00ff\u00fe=\u00fd",
      "a=" + "b".repeat(10_000),
    ];
    const cases: [string, string, Req, Kind][] = [];
    for (const cookie of cookies) {
      cases.push([`get-session cookie ${JSON.stringify(cookie.slice(0, 70))}`, "/api/auth/get-session", { headers: { cookie } }, "any"]);
      cases.push([`POST get-session cookie ${JSON.stringify(cookie.slice(0, 70))}`, "/api/auth/get-session", { method: "POST", headers: { cookie } }, "any"]);
      cases.push([`list-sessions cookie ${JSON.stringify(cookie.slice(0, 70))}`, "/api/auth/list-sessions", { headers: { cookie } }, "any"]);
      cases.push([`/account page cookie ${JSON.stringify(cookie.slice(0, 70))}`, "/account", { headers: { cookie } }, "any"]);
    }
    for (const authorization of ["Bearer", "Bearer  x", "Bearer %zz", ...FORGED_JWS.map((t) => `Bearer ${t}`), `Bearer ${accessToken}`, "Bearer " + "x".repeat(10_000), "Basic x"]) {
      cases.push([`get-session authorization ${JSON.stringify(authorization.slice(0, 50))}`, "/api/auth/get-session", { headers: { authorization } }, "any"]);
      cases.push([`POST get-session authorization ${JSON.stringify(authorization.slice(0, 50))}`, "/api/auth/get-session", { method: "POST", headers: { ...JSON_TYPE, authorization }, body: "{}" }, "any"]);
    }
    cases.push(["get-session odd query", "/api/auth/get-session?disableCookieCache=%zz&disableRefresh[]=1", { headers: { cookie: person.cookie } }, "any"]);
    cases.push(["POST get-session odd query", "/api/auth/get-session?disableCookieCache=%zz&disableRefresh[]=1", { method: "POST", headers: { cookie: person.cookie } }, "any"]);
    for (const body of ["{", "[]", "null", '{"session":{"userId":"x"}}', "x".repeat(70_000)]) {
      cases.push([`POST get-session body ${body.slice(0, 40)}`, "/api/auth/get-session", { headers: { ...JSON_TYPE, cookie: person.cookie }, body }, "any"]);
    }
    await sweep(cases);
  });

  it("sign-in, sign-up and sigma with wrong types", async () => {
    const cases: [string, string, Req, Kind][] = [];
    for (const route of ["/api/auth/sign-in/email", "/api/auth/sign-up/email", "/api/auth/sign-in/sigma", "/api/auth/sign-up/sigma", "/api/auth/sign-in/social", "/api/auth/request-password-reset", "/api/auth/reset-password", "/api/auth/update-user", "/api/auth/change-password"]) {
      for (const body of ["{", "[]", "null", "1", JSON.stringify({ email: 1, password: [], name: {}, provider: 5, callbackURL: [], token: {}, newPassword: 1, currentPassword: null }), JSON.stringify({ email: "\u0000@\ud800", password: "x", name: "x".repeat(70_000) })]) {
        cases.push([`${route} ${body.slice(0, 60)}`, route, { headers: { ...JSON_TYPE, cookie: person.cookie }, body }, "any"]);
      }
    }
    cases.push(["sign-in/sigma garbage x-auth-token", "/api/auth/sign-in/sigma", { headers: { ...JSON_TYPE, "x-auth-token": "a|b|c|d|e" }, body: "{}" }, "any"]);
    cases.push(["sign-in/sigma JWS-shaped x-auth-token", "/api/auth/sign-in/sigma", { headers: { ...JSON_TYPE, "x-auth-token": FORGED_JWS[4]! }, body: "{}" }, "any"]);
    await sweep(cases);
  });
});

describe("our JSON routes", () => {
  const jsonBodies = ["{", "", "[]", "null", "1", '"x"', "{}", '{"__proto__":{"x":1}}', "[".repeat(3000) + "]".repeat(3000)];
  const bapId = newIdentity().bapId;

  it("/api/backup/*", async () => {
    const cases: [string, string, Req, Kind][] = [];
    const bodies = [
      ...jsonBodies,
      JSON.stringify({ encryptedBackup: 1 }),
      JSON.stringify({ encryptedBackup: [] }),
      JSON.stringify({ encryptedBackup: {} }),
      JSON.stringify({ encryptedBackup: "\u0000" }),
      JSON.stringify({ encryptedBackup: "x", bapId: [] }),
      JSON.stringify({ encryptedBackup: "x", bapId: 1 }),
      JSON.stringify({ encryptedBackup: "x", bapId: "\ud800" }),
      JSON.stringify({ provider: 1, providerAccountId: [] }),
      JSON.stringify({ provider: "credential", providerAccountId: "x" }),
      JSON.stringify({ provider: "google", providerAccountId: "\u0000" }),
      JSON.stringify({ bapId, encryptedBackup: "y".repeat(100) }),
    ];
    const auths: Record<string, string>[] = [
      {},
      { cookie: person.cookie },
      { authorization: `Bearer ${accessToken}` },
      { authorization: `Bearer ${FORGED_JWS[4]}` },
      { authorization: "Bearer" },
      { authorization: "Bitcoin-Auth garbage" },
      { authorization: "Bitcoin-Auth a|b|c|d" },
      { "x-auth-token": "garbage|||" },
    ];
    for (const route of ["/api/backup", "/api/backup/link-oauth", "/api/backup/sync"]) {
      for (const auth of auths) {
        for (const body of bodies) {
          cases.push([`POST ${route} ${JSON.stringify(auth).slice(0, 40)} ${body.slice(0, 50)}`, route, { headers: { ...JSON_TYPE, ...auth }, body, method: "POST" }, "problem"]);
        }
        cases.push([`POST ${route} ${JSON.stringify(auth).slice(0, 40)} text/plain`, route, { headers: { "content-type": "text/plain", ...auth }, body: "{}" }, "problem"]);
        cases.push([`POST ${route} ${JSON.stringify(auth).slice(0, 40)} form`, route, { headers: { ...FORM, ...auth }, body: "encryptedBackup=x" }, "problem"]);
      }
    }
    for (const auth of auths) {
      for (const q of ["", "?bapId=", "?bapId=%zz", "?bapId=a&bapId=b", `?bapId=${bapId}`, `?bapId=${bapId}&oauthId=google|1`, "?oauthId=nobar", "?oauthId=google|%00", "?oauthId=" + "x".repeat(5000), "?bapId[]=x", "?unknown=1"]) {
        for (const route of ["/api/backup", "/api/backup/status", "/api/backup/sync"]) {
          cases.push([`GET ${route}${q.slice(0, 50)} ${JSON.stringify(auth).slice(0, 40)}`, `${route}${q}`, { headers: auth }, "problem"]);
        }
      }
    }
    cases.push(["DELETE /api/backup", "/api/backup", { method: "DELETE", headers: { cookie: person.cookie } }, "problem"]);
    cases.push(["PUT /api/backup/sync", "/api/backup/sync", { method: "PUT", headers: JSON_TYPE, body: "{}" }, "problem"]);
    cases.push(["POST /api/backup over its limit", "/api/backup", { headers: { ...JSON_TYPE, cookie: person.cookie }, body: JSON.stringify({ encryptedBackup: "z".repeat(6 * 1024 * 1024) }) }, "problem"]);
    await sweep(cases);
  }, 30_000);

  it("/api/user/* and /api/bap/*", async () => {
    const cases: [string, string, Req, Kind][] = [];
    const userBodies = [
      ...jsonBodies,
      JSON.stringify({ bapId: 1 }),
      JSON.stringify({ bapId: [] }),
      JSON.stringify({ bapId, counter: "1", isPrimary: "yes", name: 5, accountPubkey: [], currentAddress: {}, profile: [] }),
      JSON.stringify({ bapId, counter: 1e308, profile: { identity: "x".repeat(60_000) } }),
      JSON.stringify({ bapId, unknown: 1 }),
      JSON.stringify({ bapId: "\ud800" }),
      JSON.stringify({ bapId, profile: null }),
      JSON.stringify({ bapId, profile: { identity: null } }),
      JSON.stringify({ bapId, txid: 1, profile: { identity: {} } }),
      JSON.stringify({ bapId, txid: "A".repeat(64), profile: { identity: {} }, kind: [], fundedBy: {} }),
      JSON.stringify({ bapId, txid: "a".repeat(64), profile: { identity: {} } }),
    ];
    const auths: Record<string, string>[] = [{}, { cookie: person.cookie }, { cookie: person.cookie, "x-auth-token": "garbage" }, { cookie: person.cookie, "x-auth-token": FORGED_JWS[4]! }, { authorization: `Bearer ${FORGED_JWS[4]}` }];
    for (const route of ["/api/user/bap-ids", "/api/bap/profile", "/api/bap/profile/published"]) {
      for (const auth of auths) {
        for (const body of userBodies) {
          cases.push([`POST ${route} ${JSON.stringify(auth).slice(0, 40)} ${body.slice(0, 50)}`, route, { headers: { ...JSON_TYPE, ...auth }, body, method: "POST" }, "problem"]);
        }
        cases.push([`POST ${route} text/plain`, route, { headers: { "content-type": "text/plain", ...auth }, body: "{}" }, "problem"]);
        cases.push([`POST ${route} over 64 KiB`, route, { headers: { ...JSON_TYPE, ...auth }, body: JSON.stringify({ bapId, profile: { x: "y".repeat(70_000) } }) }, "problem"]);
      }
    }
    for (const q of ["", "?pubkey=", "?pubkey=zz", "?pubkey=%zz", "?pubkey=a&pubkey=b", "?pubkey[]=x", `?pubkey=${"0".repeat(10_000)}`, "?bapId=", "?bapId=%00", `?bapId=${bapId}`, `?bapId=${bapId}&pubkey=${newIdentity().pubkey}`, "?bapId=a&bapId=b"]) {
      for (const route of ["/api/user/bap-ids", "/api/bap/profile", "/api/bap/profile/published"]) {
        cases.push([`GET ${route}${q.slice(0, 50)}`, `${route}${q}`, {}, "problem"]);
        cases.push([`GET ${route}${q.slice(0, 50)} signed in`, `${route}${q}`, { headers: { cookie: person.cookie } }, "problem"]);
      }
      cases.push([`DELETE /api/bap/profile${q.slice(0, 50)}`, `/api/bap/profile${q}`, { method: "DELETE", headers: { cookie: person.cookie } }, "problem"]);
    }
    cases.push(["GET /api/user/unknown", "/api/user/unknown", {}, "problem"]);
    cases.push(["PATCH /api/bap/profile", "/api/bap/profile", { method: "PATCH", headers: { ...JSON_TYPE, cookie: person.cookie }, body: "{}" }, "any"]);
    await sweep(cases);
  }, 30_000);

  it("/api/authorized-apps and /api/agents", async () => {
    const cases: [string, string, Req, Kind][] = [];
    const ids = ["x", "%zz", "%E0%A4%A", "%00", "x".repeat(5000), "..", "%2F..%2F", encodeURIComponent("💥"), "%F0%9F", publicClient.client_id];
    const auths: Record<string, string>[] = [{}, { cookie: person.cookie }, { cookie: "better-auth.session_token=garbage" }, { authorization: `Bearer ${FORGED_JWS[4]}` }, { authorization: `Bearer ${accessToken}` }];
    for (const auth of auths) {
      const who = JSON.stringify(auth).slice(0, 40);
      cases.push([`GET /api/authorized-apps ${who}`, "/api/authorized-apps", { headers: auth }, "problem"]);
      cases.push([`GET /api/agents ${who}`, "/api/agents", { headers: auth }, "problem"]);
      for (const id of ids) {
        cases.push([`DELETE /api/authorized-apps/${id.slice(0, 30)} ${who}`, `/api/authorized-apps/${id}`, { method: "DELETE", headers: auth }, "problem"]);
        for (const route of [`/api/agents/hosts/${id}/pause`, `/api/agents/agents/${id}/resume`, `/api/agents/grants/${id}/revoke`, `/api/agents/hosts/${id}/revoke`]) {
          for (const body of [undefined, "{", "[]", JSON.stringify({ reason: 1 })]) {
            cases.push([`POST ${route.slice(0, 60)} ${who} ${body ?? "(no body)"}`, route, { method: "POST", headers: { ...(body ? JSON_TYPE : {}), ...auth }, body }, "problem"]);
          }
        }
      }
    }
    cases.push(["POST /api/agents/hosts/x/explode", "/api/agents/hosts/x/explode", { method: "POST", headers: { cookie: person.cookie } }, "problem"]);
    cases.push(["POST /api/agents cross-site", "/api/agents/grants/x/revoke", { method: "POST", headers: { cookie: person.cookie, origin: "https://evil.example.com" } }, "problem"]);
    cases.push(["POST /api/authorized-apps", "/api/authorized-apps", { headers: { ...JSON_TYPE, cookie: person.cookie }, body: "{" }, "problem"]);
    await sweep(cases);
  });

  it("/api/wallet/* and /api/auth/wallet/*", async () => {
    const cases: [string, string, Req, Kind][] = [];
    const walletBodies = [
      ...jsonBodies,
      JSON.stringify({ bapId, authToken: 1, provider: [] }),
      JSON.stringify({ bapId, authToken: "a|b|c|d|e", provider: "yours" }),
      JSON.stringify({ bapId, authToken: "x".repeat(5000), provider: "yours" }),
      JSON.stringify({ bapId, provider: "metamask", connectionMethod: "evm", address: "0x" + "1".repeat(40), message: "\ud800", signature: "0x" + "ab".repeat(65) }),
      JSON.stringify({ bapId, walletAddress: {}, depositAddress: 1 }),
      JSON.stringify({ origin: 1, collection: [], minCount: "2" }),
      JSON.stringify({ origin: "a".repeat(64) + "_0", minCount: 1e308 }),
      JSON.stringify({ collection: "x", minCount: -1 }),
    ];
    // An OAuth access token is no session here (spec, per-route authentication): a 401 problem like none.
    const auths: Record<string, string>[] = [{}, { cookie: person.cookie }, { authorization: `Bearer ${accessToken}` }];
    for (const base of ["/api/wallet", "/api/auth/wallet"]) {
      for (const auth of auths) {
        const who = JSON.stringify(auth).slice(0, 40);
        for (const route of ["/connect", "/connect/challenge", "/set-primary", "/set-payment", "/verify-ownership"]) {
          for (const body of walletBodies) cases.push([`POST ${base}${route} ${who} ${body.slice(0, 50)}`, base + route, { headers: { ...JSON_TYPE, ...auth }, body, method: "POST" }, "problem"]);
          cases.push([`POST ${base}${route} ${who} text/plain`, base + route, { headers: { "content-type": "text/plain", ...auth }, body: "{}" }, "problem"]);
        }
        for (const q of ["", "?bapId=", "?bapId=%zz", "?bapId=a&bapId=b", `?bapId=${bapId}`, `?bapId=${bapId}&address=%00`, `?bapId=${bapId}&address=${"x".repeat(5000)}`, "?refresh=yes", "?bapId[]=x"]) {
          for (const route of ["/connect", "/address", "/nfts"]) cases.push([`GET ${base}${route}${q.slice(0, 40)} ${who}`, `${base}${route}${q}`, { headers: auth }, "problem"]);
          cases.push([`DELETE ${base}/connect${q.slice(0, 40)} ${who}`, `${base}/connect${q}`, { method: "DELETE", headers: auth }, "problem"]);
        }
      }
      cases.push([`POST ${base}/connect cross-site`, `${base}/connect`, { method: "POST", headers: { ...JSON_TYPE, cookie: person.cookie, origin: "https://evil.example.com" }, body: "{}" }, "problem"]);
    }
    cases.push(["GET /api/wallet/unknown", "/api/wallet/unknown", { headers: { cookie: person.cookie } }, "problem"]);
    await sweep(cases);
  }, 60_000);

  it("agent-auth endpoints with forged JWTs and wrong types", async () => {
    const cases: [string, string, Req, Kind][] = [];
    const posts = ["/api/auth/agent/register", "/api/auth/capability/execute", "/api/auth/capability/batch-execute", "/api/auth/agent/request-capability", "/api/auth/agent/introspect", "/api/auth/agent/status", "/api/auth/agent/revoke", "/api/auth/agent/rotate-key", "/api/auth/agent/device/code", "/api/auth/agent/ciba/authorize", "/api/auth/agent/approve-capability", "/api/auth/agent/claim", "/api/auth/host/enroll", "/api/auth/host/create", "/api/auth/agent/reactivate"];
    for (const route of posts) {
      for (const authorization of [undefined, ...FORGED_JWS.slice(3, 6).map((t) => `Bearer ${t}`), "Bearer " + "x".repeat(10_000)]) {
        for (const body of ["{", "[]", JSON.stringify({ name: 1, capabilities: "x", capability: [], arguments: "x", token: {}, user_code: 5, agent_id: [], host_id: {}, public_key: 1, jwk: "x" })]) {
          cases.push([`POST ${route} ${authorization?.slice(0, 30) ?? "(none)"} ${body.slice(0, 40)}`, route, { headers: { ...JSON_TYPE, ...(authorization ? { authorization } : {}), cookie: person.cookie }, body }, "any"]);
        }
      }
    }
    for (const route of ["/api/auth/agent-configuration", "/api/auth/capability/list?x=%zz", "/api/auth/capability/describe?name[]=x", "/api/auth/agent/get?agent_id=%00", "/api/auth/agent/session", "/api/auth/agent/list?limit=-1&offset=abc", "/api/auth/host/list", "/api/auth/agent-approval?user_code=" + "x".repeat(100), "/api/auth/agent-approval?user_code=%zz", "/api/auth/agent/ciba/pending"]) {
      cases.push([`GET ${route}`, route, { headers: { cookie: person.cookie, authorization: `Bearer ${FORGED_JWS[4]}` } }, "any"]);
    }
    await sweep(cases);
  });
});

describe("pages and odd paths", () => {
  it("answers garbage on pages and paths with a 4xx", async () => {
    const cases: [string, string, Req, Kind][] = [];
    for (const path of ["/%zz", "/api/%zz", "/api/auth/%zz", "/api/auth/oauth2/%E0%A4%A", "/sign-in?return_to=%zz", "/sign-in?return_to=//evil.example.com", "/consent?client_id[]=x&scope=%00", "/consent?sig=x&exp=abc", "/error?error=%zz&error_description=" + "x".repeat(5000), "/reset-password?token=%00", "/invitations/%zz", "/invitations/" + "x".repeat(3000), "/agents/approve?user_code=%zz", "/sign-in/two-factor?return_to=%00", "/.well-known/%zz", "/api/auth/jwks?x=%zz"]) {
      cases.push([`GET ${path.slice(0, 80)}`, path, { headers: { cookie: person.cookie } }, "any"]);
    }
    // Paths and methods better-auth has no endpoint for: its `{message, code}`, not an empty 404.
    for (const path of ["/api/auth", "/api/auth/", "/api/auth/no-such-endpoint", "/api/auth/%zz/x", "/api/auth/get-session/", "/api/auth//get-session", "/api/auth/token", "/api/auth/" + "x/".repeat(2000), "/api/auth/oauth2/nope?x=%zz&y[]=1"]) {
      cases.push([`GET ${path.slice(0, 80)} (no endpoint)`, path, { headers: { cookie: person.cookie } }, "better-auth"]);
      cases.push([`POST ${path.slice(0, 80)} (no endpoint)`, path, { headers: { ...JSON_TYPE, cookie: person.cookie }, body: "{" }, "better-auth"]);
      cases.push([`PUT ${path.slice(0, 80)} (no endpoint)`, path, { method: "PUT", headers: { ...FORM, cookie: person.cookie }, body: "a=%zz" }, "better-auth"]);
    }
    for (const path of ["/sign-in", "/sign-up", "/consent", "/forgot-password", "/reset-password", "/sign-in/two-factor", "/agents/approve", "/account/profile", "/account/sessions/revoke", "/account/apps/revoke", "/account/identities/primary", "/account/organizations/create"]) {
      cases.push([`POST ${path} garbage form`, path, { headers: { ...FORM, cookie: person.cookie }, body: "a[]=1&email=%zz&password=%00&oauth_query=%E0%A4%A&" + "x=".repeat(1000) }, "any"]);
      cases.push([`POST ${path} JSON array`, path, { headers: { ...JSON_TYPE, cookie: person.cookie }, body: "[" }, "any"]);
      cases.push([`POST ${path} invalid UTF-8`, path, { headers: { ...FORM, cookie: person.cookie }, body: Buffer.from([0x61, 0x3d, 0xff, 0xfe]) }, "any"]);
    }
    await sweep(cases);
  });
});

describe("deep paths: real codes, tokens, consent and device codes with wrong types", () => {
  /** A fresh authorization code for the public client, with its verifier. */
  async function freshCode() {
    const { verifier, challenge } = pkce();
    const auth = await authorize(server, { clientId: publicClient.client_id, cookie: person.cookie, challenge });
    return { code: auth.code!, verifier };
  }
  const tokenPath = "/api/auth/oauth2/token";

  it("authorization_code and refresh_token grants", async () => {
    const variants: ((c: { code: string; verifier: string }) => Record<string, unknown>)[] = [
      ({ code }) => ({ code, code_verifier: ["x"], redirect_uri: REDIRECT }),
      ({ code, verifier }) => ({ code, code_verifier: verifier, redirect_uri: 5 }),
      ({ code, verifier }) => ({ code, code_verifier: verifier, redirect_uri: [REDIRECT] }),
      ({ code, verifier }) => ({ code: [code], code_verifier: verifier, redirect_uri: REDIRECT }),
      ({ code, verifier }) => ({ code, code_verifier: { v: verifier }, redirect_uri: REDIRECT }),
      ({ code, verifier }) => ({ code, code_verifier: verifier, redirect_uri: REDIRECT, resource: [1, {}] }),
      ({ code, verifier }) => ({ code, code_verifier: verifier, redirect_uri: REDIRECT, resource: "not a url" }),
      ({ code, verifier }) => ({ code, code_verifier: verifier, redirect_uri: REDIRECT, scope: 7 }),
      ({ code, verifier }) => ({ code, code_verifier: verifier + "\u0000", redirect_uri: REDIRECT }),
      ({ code, verifier }) => ({ code, code_verifier: verifier, redirect_uri: REDIRECT, client_id: confidential.client_id }),
    ];
    for (const [i, variant] of variants.entries()) {
      const fresh = await freshCode();
      const fields = { grant_type: "authorization_code", client_id: publicClient.client_id, ...variant(fresh) };
      expectClean(`code grant JSON variant ${i} ${JSON.stringify(fields).slice(0, 80)}`, await send(tokenPath, { headers: JSON_TYPE, body: JSON.stringify(fields) }), "oauth");
    }
    const fresh = await freshCode();
    expectClean("code grant repeated code_verifier", await send(tokenPath, { headers: FORM, body: form([["grant_type", "authorization_code"], ["client_id", publicClient.client_id], ["code", fresh.code], ["code_verifier", fresh.verifier], ["code_verifier", "x"], ["redirect_uri", REDIRECT]]) }), "oauth");

    const refreshVariants: ((rt: string) => Record<string, unknown>)[] = [
      (rt) => ({ refresh_token: rt, scope: 5 }),
      (rt) => ({ refresh_token: rt, scope: ["openid"] }),
      (rt) => ({ refresh_token: rt, scope: "openid admin:everything" }),
      (rt) => ({ refresh_token: rt, resource: [{}] }),
      (rt) => ({ refresh_token: rt, resource: "https://x.example/" }),
      (rt) => ({ refresh_token: [rt] }),
      (rt) => ({ refresh_token: rt, client_id: confidential.client_id }),
    ];
    for (const [i, variant] of refreshVariants.entries()) {
      const { code, verifier } = await freshCode();
      const t = await token(server, { grant_type: "authorization_code", code, redirect_uri: REDIRECT, client_id: publicClient.client_id, code_verifier: verifier });
      const fields = { grant_type: "refresh_token", client_id: publicClient.client_id, ...variant(t.json.refresh_token) };
      expectClean(`refresh grant JSON variant ${i} ${JSON.stringify(fields).slice(0, 80)}`, await send(tokenPath, { headers: JSON_TYPE, body: JSON.stringify(fields) }), "oauth");
    }
  });

  it("consent with a real signed query and wrong types", async () => {
    const client = await registerClient(server, { client_name: "Consent Garbage" });
    const { challenge } = pkce();
    const params = { response_type: "code", client_id: client.client_id, redirect_uri: REDIRECT, scope: "openid profile", state: "s", code_challenge: challenge, code_challenge_method: "S256" };
    const bodies = (q: string): unknown[] => [
      { accept: "yes", oauth_query: q },
      { accept: 1, oauth_query: q },
      { accept: true, oauth_query: q, scope: 5 },
      { accept: true, oauth_query: q, scope: ["openid"] },
      { accept: true, oauth_query: q, scope: "openid admin" },
      { accept: true, oauth_query: q, scope: "\u0000" },
      { accept: true, oauth_query: q + "&client_id=other" },
      { accept: true, oauth_query: q.replace(/sig=[^&]+/, "sig=%zz") },
    ];
    for (const body of bodies("placeholder")) {
      const res = await send(`/api/auth/oauth2/authorize?${new URLSearchParams(params)}`, { headers: { cookie: person.cookie } });
      const location = String(res.headers.location ?? res.json?.url ?? "");
      expect(location, res.text).toContain("/consent");
      const q = new URL(location, server.url).search.slice(1);
      const real = JSON.parse(JSON.stringify(body).replace(/placeholder/g, q));
      expectClean(`consent ${JSON.stringify(real).replace(q, "<q>").slice(0, 80)}`, await send("/api/auth/oauth2/consent", { headers: { ...JSON_TYPE, cookie: person.cookie }, body: JSON.stringify(real) }), "any");
      expectClean(`continue ${JSON.stringify(real).replace(q, "<q>").slice(0, 80)}`, await send("/api/auth/oauth2/continue", { headers: { ...JSON_TYPE, cookie: person.cookie }, body: JSON.stringify({ ...real, selected: [], postLogin: "x" }) }), "any");
    }
  });

  it("device codes: polling and approving with wrong types", async () => {
    const issued = await send("/api/auth/device/code", { headers: FORM, body: form({ client_id: deviceClient.client_id, scope: "openid" }) });
    expect(issued.status, issued.text).toBe(200);
    const { device_code: deviceCode, user_code: userCode } = issued.json;
    await sweep([
      ["poll with the code as array", tokenPath, { headers: JSON_TYPE, body: JSON.stringify({ grant_type: DEVICE_GRANT, client_id: deviceClient.client_id, device_code: [deviceCode] }) }, "oauth"],
      ["poll with another client", tokenPath, { headers: FORM, body: form({ grant_type: DEVICE_GRANT, client_id: publicClient.client_id, device_code: deviceCode }) }, "oauth"],
      ["poll with a repeated code", tokenPath, { headers: FORM, body: form([["grant_type", DEVICE_GRANT], ["client_id", deviceClient.client_id], ["device_code", deviceCode], ["device_code", "x"]]) }, "oauth"],
      ["poll with the user code", tokenPath, { headers: FORM, body: form({ grant_type: DEVICE_GRANT, client_id: deviceClient.client_id, device_code: userCode }) }, "oauth"],
      ["verify with the device code", `/api/auth/device?user_code=${encodeURIComponent(deviceCode)}`, { headers: { cookie: person.cookie } }, "any"],
      ["verify with the user code, lower case", `/api/auth/device?user_code=${encodeURIComponent(userCode.toLowerCase())}`, { headers: { cookie: person.cookie } }, "any"],
      ["approve with the code as array", "/api/auth/device/approve", { headers: { ...JSON_TYPE, cookie: person.cookie }, body: JSON.stringify({ userCode: [userCode] }) }, "any"],
      ["approve with the code as object", "/api/auth/device/approve", { headers: { ...JSON_TYPE, cookie: person.cookie }, body: JSON.stringify({ userCode: { userCode } }) }, "any"],
      ["deny anonymously", "/api/auth/device/deny", { headers: JSON_TYPE, body: JSON.stringify({ userCode }) }, "any"],
      ["poll with scope garbage", tokenPath, { headers: FORM, body: form({ grant_type: DEVICE_GRANT, client_id: deviceClient.client_id, device_code: deviceCode, scope: "\ud800" }) }, "oauth"],
    ]);
  });
});

describe("better-auth's surface with wrong types", () => {
  it("every account, organization, two-factor, passkey and client-management route", async () => {
    // Someone of their own: a few of these routes end sessions.
    const other = await signUp(server);
    const wrong = JSON.stringify({
      email: [1],
      password: {},
      name: 5,
      newEmail: [],
      newPassword: 1,
      currentPassword: null,
      token: {},
      code: [],
      backupCode: 5,
      provider: [],
      providerId: 1,
      accountId: {},
      userId: [],
      organizationId: 5,
      invitationId: {},
      memberIdOrEmail: [],
      role: {},
      slug: 3,
      id: [],
      client_id: {},
      callbackURL: ["x"],
      redirectTo: 5,
      trustDevice: "yes",
      response: "x",
      options: [],
      limit: "x",
      oauth_query: ["x"],
    });
    const bodies = ["{", "[]", "null", '"x"', wrong, JSON.stringify({ oauth_query: ["x"] }), JSON.stringify({ oauth_query: [["sig", "x"]] }), JSON.stringify({ callbackURL: "//evil.example.com", email: "\u0000@\ud800.x", oauth_query: {} })];
    const posts = [
      "sign-in/email",
      "sign-up/email",
      "sign-in/social",
      "sign-in/sigma",
      "link-social",
      "unlink-account",
      "get-access-token",
      "refresh-token",
      "change-email",
      "change-password",
      "update-user",
      "update-session",
      "verify-password",
      "send-verification-email",
      "request-password-reset",
      "reset-password",
      "revoke-session",
      "organization/create",
      "organization/update",
      "organization/delete",
      "organization/invite-member",
      "organization/accept-invitation",
      "organization/reject-invitation",
      "organization/cancel-invitation",
      "organization/remove-member",
      "organization/update-member-role",
      "organization/leave",
      "organization/set-active",
      "organization/check-slug",
      "organization/has-permission",
      "two-factor/enable",
      "two-factor/disable",
      "two-factor/verify-totp",
      "two-factor/verify-otp",
      "two-factor/verify-backup-code",
      "two-factor/generate-backup-codes",
      "two-factor/get-totp-uri",
      "two-factor/send-otp",
      "passkey/verify-registration",
      "passkey/verify-authentication",
      "passkey/delete-passkey",
      "passkey/update-passkey",
      "admin/ban-user",
      "admin/set-role",
      "admin/create-user",
      "admin/has-permission",
      "oauth2/create-client",
      "oauth2/update-client",
      "oauth2/delete-client",
      "oauth2/client/rotate-secret",
      "oauth2/update-consent",
      "oauth2/delete-consent",
      "oauth2/public-client-prelogin",
    ];
    const cases: [string, string, Req, Kind][] = [];
    for (const route of posts) {
      for (const body of bodies) {
        cases.push([`POST /api/auth/${route} ${body.slice(0, 60)}`, `/api/auth/${route}`, { headers: { ...JSON_TYPE, cookie: other.cookie }, body }, "any"]);
      }
      cases.push([`POST /api/auth/${route} anonymous`, `/api/auth/${route}`, { headers: JSON_TYPE, body: wrong }, "any"]);
      cases.push([`POST /api/auth/${route} form`, `/api/auth/${route}`, { headers: { ...FORM, cookie: other.cookie }, body: "email[]=x&password=%zz&oauth_query[]=x" }, "any"]);
    }
    const gets = [
      "verify-email?token=" + FORGED_JWS[4],
      "verify-email?token=a.b.c",
      "verify-email?token=%zz&callbackURL=//evil.example.com",
      "reset-password/%zz?callbackURL=%00",
      "reset-password/" + "x".repeat(3000),
      "delete-user/callback?token=" + FORGED_JWS[4],
      "change-email/confirm?token=%zz&callbackURL=//evil.example.com",
      "change-email/confirm?token[]=x",
      "change-email/undo?token=" + "x".repeat(3000),
      "change-email/undo",
      "callback/google?code=x&state=%zz",
      "callback/nope?code=x&state=" + FORGED_JWS[4],
      "callback/%zz",
      "error?error=%zz",
      "account-info?accountId=%zz",
      "account-info?accountId[]=x",
      "list-accounts?x=%zz",
      "organization/get-full-organization?organizationId=%zz",
      "organization/get-full-organization?organizationId=a&organizationId=b",
      "organization/get-invitation?id=" + "x".repeat(5000),
      "organization/list-members?limit=abc&offset=-1&sortBy[]=x",
      "organization/list-invitations?organizationId=%00",
      "organization/get-active-member",
      "passkey/generate-register-options?authenticatorAttachment=%zz&name[]=x",
      "passkey/generate-authenticate-options?x=%zz",
      "passkey/list-user-passkeys",
      "admin/list-users?limit=abc&offset=-5&searchValue=%zz&filterField[]=x",
      "admin/get-user?id=%zz",
      "oauth2/get-client?client_id=%zz",
      "oauth2/get-client?client_id[]=x",
      "oauth2/get-clients?x=%zz",
      "oauth2/public-client?client_id=%zz",
      "oauth2/public-client?client_id=" + "x".repeat(5000),
      "oauth2/get-consent?id=%zz",
      "oauth2/get-consents?x=[]",
      "jwks?x=%zz",
      "ok?x=%zz",
    ];
    for (const route of gets) {
      cases.push([`GET /api/auth/${route.slice(0, 70)}`, `/api/auth/${route}`, { headers: { cookie: other.cookie } }, "any"]);
      cases.push([`GET /api/auth/${route.slice(0, 70)} anonymous`, `/api/auth/${route}`, {}, "any"]);
    }
    // Redirect targets that cannot be parsed or composed, on every route that redirects to one.
    for (const target of ["//evil.example.com", "/\\evil.example.com", "http://[::1", "https://", "javascript:alert(1)", "%zz", "/\u0000", " "]) {
      const t = encodeURIComponent(target);
      for (const route of [`verify-email?token=x&callbackURL=${t}`, `change-email/confirm?token=x&callbackURL=${t}`, `verify-email?token=${FORGED_JWS[4]}&callbackURL=${t}`, `reset-password/nope?callbackURL=${t}`, `delete-user/callback?token=nope&callbackURL=${t}`, `error?error=x&callbackURL=${t}`]) {
        cases.push([`GET /api/auth/${route}`, `/api/auth/${route}`, {}, "any"]);
      }
      for (const [route, body] of [
        ["request-password-reset", { email: other.email, redirectTo: target }],
        ["send-verification-email", { email: other.email, callbackURL: target }],
        ["sign-in/social", { provider: "google", callbackURL: target, errorCallbackURL: target, newUserCallbackURL: target }],
        ["link-social", { provider: "google", callbackURL: target }],
        ["change-email", { newEmail: "new-" + other.email, callbackURL: target }],
        ["delete-user", { callbackURL: target, password: "wrong" }],
      ] as const) {
        cases.push([`POST /api/auth/${route} ${JSON.stringify(body).slice(0, 80)}`, `/api/auth/${route}`, { headers: { ...JSON_TYPE, cookie: other.cookie }, body: JSON.stringify(body) }, "any"]);
      }
    }
    await sweep(cases);
    // Last: the routes that end every session of `other`.
    await sweep(
      ["sign-out", "revoke-other-sessions", "revoke-sessions", "delete-user"].flatMap((route): [string, string, Req, Kind][] => [
        [`POST /api/auth/${route} wrong types`, `/api/auth/${route}`, { headers: { ...JSON_TYPE, cookie: other.cookie }, body: wrong }, "any"],
        [`POST /api/auth/${route} array`, `/api/auth/${route}`, { headers: { ...JSON_TYPE, cookie: other.cookie }, body: "[]" }, "any"],
      ]),
    );
  }, 30_000);
});

describe("transport oddities on every kind of route", () => {
  it("chunked bodies, bodies on GET, HEAD, OPTIONS, odd methods and content types", async () => {
    const routes: [string, Kind][] = [
      ["/api/auth/oauth2/token", "oauth"],
      ["/api/auth/oauth2/introspect", "oauth"],
      ["/api/auth/oauth2/revoke", "oauth"],
      ["/api/auth/oauth2/register", "oauth"],
      ["/api/auth/oauth2/userinfo", "oauth"],
      ["/api/auth/device/code", "oauth"],
      ["/api/auth/oauth2/authorize", "any"],
      ["/api/auth/oauth2/end-session", "any"],
      ["/api/auth/get-session", "any"],
      ["/api/auth/sign-in/email", "any"],
      ["/api/auth/no-such-endpoint", "better-auth"],
      ["/api/backup", "problem"],
      ["/api/backup/sync", "problem"],
      ["/api/user/bap-ids", "problem"],
      ["/api/bap/profile", "problem"],
      ["/api/authorized-apps", "problem"],
      ["/api/agents", "problem"],
      ["/sign-in", "any"],
      ["/device", "any"],
    ];
    const contentTypes = ["application/json; charset=utf-16", "APPLICATION/JSON", "application/json;", "application/jsonp", "application/merge-patch+json", "application/x-www-form-urlencoded; charset=latin1", "*/*", "", "multipart/form-data; boundary=", "text/html"];
    const cases: [string, string, Req, Kind][] = [];
    for (const [path, kind] of routes) {
      const headers = { cookie: person.cookie };
      cases.push([`${path} chunked JSON`, path, { method: "POST", headers: { ...headers, ...JSON_TYPE }, body: JSON.stringify({ token: "x", grant_type: "refresh_token", encryptedBackup: 1 }), chunked: true }, kind]);
      cases.push([`${path} chunked form`, path, { method: "POST", headers: { ...headers, ...FORM }, body: form({ token: "x", grant_type: "refresh_token", client_id: publicClient.client_id, refresh_token: "x" }), chunked: true }, kind]);
      cases.push([`${path} chunked malformed JSON`, path, { method: "POST", headers: { ...headers, ...JSON_TYPE }, body: "{\"a\":", chunked: true }, kind]);
      cases.push([`${path} chunked over 1 MiB`, path, { method: "POST", headers: { ...headers, ...FORM }, body: "a=" + "x".repeat(1_100_000), chunked: true }, "any"]);
      cases.push([`${path} GET with a JSON body`, path, { method: "GET", headers: { ...headers, ...JSON_TYPE }, body: "{" }, kind]);
      cases.push([`${path} GET with a form body`, path, { method: "GET", headers: { ...headers, ...FORM }, body: "token=x" }, kind]);
      cases.push([`${path} DELETE with a body`, path, { method: "DELETE", headers: { ...headers, ...JSON_TYPE }, body: "[]" }, "any"]);
      cases.push([`${path} HEAD`, path, { method: "HEAD", headers }, "any"]);
      cases.push([`${path} OPTIONS`, path, { method: "OPTIONS", headers: { ...headers, "access-control-request-method": "POST", "access-control-request-headers": "x-\u00ff" } }, "any"]);
      cases.push([`${path} PATCH`, path, { method: "PATCH", headers: { ...headers, ...JSON_TYPE }, body: "{}" }, "any"]);
      cases.push([`${path} FOO`, path, { method: "FOO", headers }, "any"]);
      cases.push([`${path} gzip that is not`, path, { method: "POST", headers: { ...headers, ...JSON_TYPE, "content-encoding": "gzip" }, body: "{}" }, kind]);
      for (const type of contentTypes) {
        cases.push([`${path} content-type ${JSON.stringify(type)}`, path, { method: "POST", headers: { ...headers, "content-type": type }, body: '{"token":"x"}' }, kind]);
      }
      cases.push([`${path} query of 12 KB`, `${path}?${"q=" + "x".repeat(12_000)}`, { headers }, "any"]);
      cases.push([`${path} odd headers`, path, { headers: { ...headers, "x-request-id": "\u00ff".repeat(200), "x-forwarded-for": "garbage, ::zz", "x-idp-client-ip": "not an ip", "accept": "\u00ff/\u00fe", "accept-language": "x".repeat(5000) } }, "any"]);
    }
    await sweep(cases);
  }, 30_000);
});

describe("forged Bitcoin-Auth tokens", () => {
  it("on the member-key token endpoint, backups, identity registration and sigma sign-in", async () => {
    const id = newIdentity();
    const client = await registerClient(server, { member_pubkey: id.pubkey, owner_bap_id: id.bapId });
    const now = new Date().toISOString();
    const forge = (path: string, body?: string) => [
      `${id.pubkey}|brc77|${now}|${path}|`,
      `${id.pubkey}|brc77|${now}|${path}|AAAA`,
      `${id.pubkey}|brc77|${now}|${path}|${Buffer.alloc(200, 0xff).toString("base64")}`,
      `${id.pubkey}|brc77|${now}|${path}|${Buffer.concat([Buffer.alloc(4), Buffer.from(id.pubkey, "hex"), Buffer.alloc(100)]).toString("base64")}`,
      `${id.pubkey}|bsm|${now}|${path}|!!!!`,
      `${id.pubkey}|bsm|${now}|${path}|${Buffer.alloc(65).toString("base64")}`,
      `${id.pubkey}|bsm|not-a-time|${path}|${Buffer.alloc(65).toString("base64")}`,
      `${id.pubkey}|bsm|9999-99-99T99:99:99Z|${path}|AAAA`,
      `02${"0".repeat(64)}|bsm|${now}|${path}|AAAA`,
      `${id.pubkey}|rsa|${now}|${path}|AAAA`,
      `${id.pubkey}|brc77|${now}|${path}|x|y|z`,
      `${id.pubkey}|brc77|${now}|${path}|` + "A".repeat(2000),
      signRequest(id.key, path, body === undefined ? "other body" : body + "x"),
      signRequest(id.key, path + "x", body),
      signRequest(id.key, path, body, { scheme: "bsm", timestamp: "2000-01-01T00:00:00.000Z" }),
      "\u00ff|\u00fe|\u00fd|\u00fc|\u00fb",
      FORGED_JWS[4]!,
    ];
    const cases: [string, string, Req, Kind][] = [];
    const tokenBody = form({ grant_type: "refresh_token", client_id: client.client_id, refresh_token: "x" });
    for (const t of forge("/api/auth/oauth2/token", tokenBody)) {
      cases.push([`member-key token x-auth-token ${t.slice(0, 40)}`, "/api/auth/oauth2/token", { headers: { ...FORM, "x-auth-token": t }, body: tokenBody }, "oauth"]);
    }
    cases.push(["member-key token without x-auth-token", "/api/auth/oauth2/token", { headers: FORM, body: tokenBody }, "oauth"]);
    cases.push(["member-key token JSON", "/api/auth/oauth2/token", { headers: { ...JSON_TYPE, "x-auth-token": "a|b|c|d|e" }, body: JSON.stringify({ grant_type: "refresh_token", client_id: client.client_id, refresh_token: ["x"] }) }, "oauth"]);
    cases.push(["member-key token over 16 KiB", "/api/auth/oauth2/token", { headers: FORM, body: tokenBody + "&pad=" + "x".repeat(20_000) }, "oauth"]);
    cases.push(["member-key token chunked", "/api/auth/oauth2/token", { headers: FORM, body: tokenBody, chunked: true }, "oauth"]);
    cases.push(["member-key token Basic naming it", "/api/auth/oauth2/token", { headers: { ...FORM, authorization: basic(client.client_id, "x") }, body: form({ grant_type: "client_credentials" }) }, "oauth"]);

    const syncBody = JSON.stringify({ bapId: id.bapId, encryptedBackup: "x" });
    for (const t of forge("/api/backup/sync", syncBody)) {
      cases.push([`POST /api/backup/sync ${t.slice(0, 40)}`, "/api/backup/sync", { headers: { ...JSON_TYPE, authorization: `Bitcoin-Auth ${t}` }, body: syncBody }, "problem"]);
      cases.push([`GET /api/backup/sync ${t.slice(0, 40)}`, `/api/backup/sync?bapId=${id.bapId}`, { headers: { authorization: `Bitcoin-Auth ${t}` } }, "problem"]);
    }
    for (const t of forge(`/api/backup?bapId=${id.bapId}`)) {
      cases.push([`GET /api/backup?bapId x-auth-token ${t.slice(0, 40)}`, `/api/backup?bapId=${id.bapId}`, { headers: { "x-auth-token": t } }, "problem"]);
    }
    const regBody = JSON.stringify({ bapId: id.bapId });
    for (const t of forge("/api/user/bap-ids", regBody)) {
      cases.push([`POST /api/user/bap-ids ${t.slice(0, 40)}`, "/api/user/bap-ids", { headers: { ...JSON_TYPE, cookie: person.cookie, "x-auth-token": t }, body: regBody }, "problem"]);
    }
    for (const t of forge("/api/auth/sign-in/sigma", "{}")) {
      cases.push([`POST /api/auth/sign-in/sigma ${t.slice(0, 40)}`, "/api/auth/sign-in/sigma", { headers: { ...JSON_TYPE, "x-auth-token": t }, body: "{}" }, "any"]);
      cases.push([`POST /api/auth/sign-up/sigma ${t.slice(0, 40)}`, "/api/auth/sign-up/sigma", { headers: { ...JSON_TYPE, "x-auth-token": t }, body: JSON.stringify({ name: [], email: 5 }) }, "any"]);
    }
    await sweep(cases);
  });
});

describe("deep JSON and wrong user-field types", () => {
  /** `{"a":{"a":...}}` nested `depth` levels, with `leaf` at the bottom. */
  const nested = (depth: number, leaf = "1") => '{"a":'.repeat(depth) + leaf + "}".repeat(depth);

  it("update-user refuses object and array name and image with better-auth's 400", async () => {
    for (const field of ["name", "image"]) {
      for (const value of [{}, { a: 1 }, [], ["x"], [1, 2]]) {
        const res = await send("/api/auth/update-user", { headers: { ...JSON_TYPE, cookie: person.cookie }, body: JSON.stringify({ [field]: value }) });
        expectClean(`update-user ${field}=${JSON.stringify(value)}`, res, "any");
        expect(res.status, res.text).toBe(400);
        expect(res.json?.code).toBe("VALIDATION_ERROR");
      }
    }
    const ok = await send("/api/auth/update-user", { headers: { ...JSON_TYPE, cookie: person.cookie }, body: JSON.stringify({ name: "Still Fine", image: null }) });
    expect(ok.status, ok.text).toBe(200);
  });

  it("a registration body nested 10,000 deep is an RFC 6749 400", async () => {
    const body = `{"client_name":"Deep","redirect_uris":[${JSON.stringify(REDIRECT)}],"token_endpoint_auth_method":"none","a":${nested(10_000)}}`;
    const res = await send("/api/auth/oauth2/register", { headers: JSON_TYPE, body });
    expectClean("register 10,000 deep", res, "oauth");
    expect(res.status, res.text).toBe(400);
    expect(res.json?.error).toBe("invalid_request");
  });

  it("any better-auth body past 32 levels is refused, 32 levels still pass the guard", async () => {
    const deep = await send("/api/auth/update-user", { headers: { ...JSON_TYPE, cookie: person.cookie }, body: `{"x":${nested(32)}}` });
    expectClean("update-user 33 deep", deep, "problem");
    expect(deep.status).toBe(400);
    const chunked = await send("/api/auth/sign-in/email", { headers: JSON_TYPE, body: nested(5_000), chunked: true });
    expectClean("sign-in chunked 5,000 deep", chunked, "problem");
    expect(chunked.status).toBe(400);
    // Brackets inside strings are text, not nesting.
    const text = await send("/api/auth/update-user", { headers: { ...JSON_TYPE, cookie: person.cookie }, body: JSON.stringify({ name: "[{".repeat(60) + '\\"' }) });
    expect(text.status, text.text).toBe(200);
  });

  it("profile documents nested 5,000 deep on /api/bap/profile and /api/user/bap-ids are a 400 problem", async () => {
    const id = newIdentity();
    const registerBody = JSON.stringify({ bapId: id.bapId });
    const registered = await send("/api/user/bap-ids", { headers: { ...JSON_TYPE, cookie: person.cookie, "x-auth-token": signRequest(id.key, "/api/user/bap-ids", registerBody) }, body: registerBody });
    expect(registered.status, registered.text).toBe(201);

    const deepIdentity = `{"bapId":${JSON.stringify(id.bapId)},"profile":{"identity":${nested(5_000)}}}`;
    const register = await send("/api/user/bap-ids", { headers: { ...JSON_TYPE, cookie: person.cookie, "x-auth-token": signRequest(id.key, "/api/user/bap-ids", deepIdentity) }, body: deepIdentity });
    expectClean("bap-ids 5,000 deep", register, "problem");
    expect(register.status).toBe(400);

    const draft = await send("/api/bap/profile", { headers: { ...JSON_TYPE, cookie: person.cookie }, body: deepIdentity });
    expectClean("bap profile 5,000 deep", draft, "problem");
    expect(draft.status).toBe(400);

    const published = `{"bapId":${JSON.stringify(id.bapId)},"txid":"${"b".repeat(64)}","profile":{"identity":${nested(5_000)}}}`;
    const publish = await send("/api/bap/profile/published", { headers: { ...JSON_TYPE, cookie: person.cookie }, body: published });
    expectClean("bap publication 5,000 deep", publish, "problem");
    expect(publish.status).toBe(400);
  });
});
