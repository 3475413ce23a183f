import { request } from "node:http";
import { beforeAll, expect } from "vitest";
import { useTestServer } from "./fixtures.js";
import { validatorFor, type Answer } from "./openapi-validator.js";
import { authorize, pkce, REDIRECT, registerClient, signUp, token } from "./oauth.js";

/**
 * The robustness sweep's shared fixture and plumbing (tests/meta/robustness/*.test.ts, split by
 * surface). Robustness sweep: malformed input of every kind (bad JSON, wrong content types, wrong JSON
 * types, huge values, forged tokens, unknown ids, repeated parameters, odd unicode) gets a
 * clear 4xx, never a 500, a stack trace or a hang. OAuth endpoints answer RFC 6749 objects
 * ({error, error_description}); our own JSON routes answer RFC 9457 problem details.
 */

export const server = useTestServer();
export let person: Awaited<ReturnType<typeof signUp>>;
export let publicClient: Awaited<ReturnType<typeof registerClient>>;
export let confidential: Awaited<ReturnType<typeof registerClient>> & { basic: string };
export let deviceClient: Awaited<ReturnType<typeof registerClient>>;
export let accessToken: string;
export let refreshToken: string;
export let idToken: string;

export const DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";
export const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`;

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

export interface Res {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
}

export interface Req {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Send the body chunked (no Content-Length). */
  chunked?: boolean;
}

export function send(path: string, req: Req = {}): Promise<Res> {
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
          answers.push({ method: req.method ?? (body ? "POST" : "GET"), url: path, status: res.statusCode ?? 0, contentType: res.headers["content-type"], body: text });
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

/** Every answer `send` received, checked against the OpenAPI document at the end of each sweep file. */
const answers: Answer[] = [];

/**
 * The sweep's last test: every answer it received is one the served OpenAPI document
 * describes (tests/helpers/openapi-validator.ts); an undocumented route fails here.
 */
export async function expectAnswersAsDocumented() {
  expect(answers.length).toBeGreaterThan(50);
  const validator = await validatorFor(server.url);
  expect(validator.findings(answers)).toEqual([]);
}

export const FORM = { "content-type": "application/x-www-form-urlencoded" };
export const JSON_TYPE = { "content-type": "application/json" };

/** A URL-encoded body from pairs, so a key can repeat. */
export const form = (pairs: [string, string][] | Record<string, string>) => new URLSearchParams(Array.isArray(pairs) ? pairs : Object.entries(pairs)).toString();

export type Kind = "oauth" | "problem" | "better-auth" | "any";

/**
 * The one check: below 500, no stack trace; an error status answers in the route's family
 * (RFC 6749 object on OAuth endpoints, problem+json on ours, better-auth's `{message, code}`
 * where asked, anything 4xx elsewhere).
 */
export function expectClean(name: string, res: Res, kind: Kind) {
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

export async function sweep(cases: [name: string, path: string, req: Req, kind: Kind][]) {
  for (const [name, path, req, kind] of cases) expectClean(name, await send(path, req), kind);
}

// ---------------------------------------------------------------------------------------
// Garbage values shared by the tables.

export const b64url = (s: string) => Buffer.from(s).toString("base64url");
export const FORGED_JWS = [
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
export const GARBAGE_STRINGS = ["", " ", "\u0000", "\ud800", "💥".repeat(50), "%zz", "x".repeat(100_000), "'; DROP TABLE user; --", "../../../etc/passwd", "null", "[]", "{}"];
/** Values of the wrong JSON type for a string (or array) member. */
export const WRONG_TYPES: unknown[] = [null, 0, -1, 1e308, true, [], ["x"], [1, 2], {}, { a: 1 }, "", "x".repeat(70_000)];

// ---------------------------------------------------------------------------------------
