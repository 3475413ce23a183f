import { createHmac, timingSafeEqual } from "node:crypto";
import { authEndpointOf, AUTH_PATHS, type AuthEndpoint } from "./auth-endpoints.js";
import { keep } from "./kept.js";
import { rawFormOf } from "./validate.js";

/**
 * One read of each request to better-auth's surface (BASE_PATH/*): the route, the client and
 * how it authenticates, the grant type and the credential, made once at the edge
 * (`readAuthRequest`, app.ts and auth.config.ts) and handed to the limiter
 * (lib/auth-limits.ts), the atomic refresh (lib/atomic-refresh.ts), the member-key check
 * (plugins/member-key) and the error format (app.ts). Nothing here is verified except the
 * session cookie's signature: the rest is what the request claims, for keying and routing.
 */
export interface AuthRequest {
  /** The path under BASE_PATH, without trailing slashes (`/oauth2/token`). */
  path: string;
  /** Its row of the endpoint table (lib/auth-endpoints.ts). */
  endpoint: AuthEndpoint;
  method: string;
  /** The urlencoded form of a client endpoint (lib/auth-endpoints.ts `client`), its raw text and fields. */
  form?: { raw: string; params: URLSearchParams };
  /** The token endpoint's `grant_type` (form or JSON), else null. */
  grantType: string | null;
  /** RFC 6749 §2.3: the client a client endpoint's request names, and how. */
  client?: ClientCredentials;
  /** RFC 6750 §2.1: an `Authorization: Bearer` token (a session token, an access token or an agent JWT). */
  bearer?: string;
  /**
   * The session token of better-auth's session cookie, only when its signature checks out.
   * Checked on first read (an HMAC), then kept: most requests never ask (only the `session`
   * limit does, lib/auth-limits.ts).
   */
  readonly sessionCookie?: string;
}

/**
 * The client a request names (RFC 6749 §2.3.1): by Basic credentials (`basic`), else by the
 * body's client_id with a client_secret (`secret`), an RFC 7523 assertion (`assertion`), or
 * nothing that authenticates it (`none`).
 */
export interface ClientCredentials {
  id: string | undefined;
  via: "basic" | "secret" | "assertion" | "none";
  /** Whether it authenticates (a secret or an assertion) rather than only naming itself. */
  authenticates: boolean;
}

/** The decoded halves of RFC 7617 Basic credentials, still form-encoded (RFC 6749 §2.3.1). */
export interface BasicCredentials {
  rawId: string;
  /** undefined when the decoded text has no colon. */
  rawSecret: string | undefined;
}

/** oauth-provider's test for the Basic scheme (one or more spaces after it). */
const BASIC_SCHEME = /^Basic +/i;

/**
 * Basic credentials, base64-decoded. `lenient` takes any whitespace after the scheme (the
 * member-key check looks at every way a client might be named).
 */
export function basicCredentialsOf(header: string | null | undefined, lenient = false): BasicCredentials | null {
  if (!header || !(lenient ? /^basic\s/i : BASIC_SCHEME).test(header)) return null;
  const decoded = Buffer.from(header.slice(5).trim(), "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  return colon === -1 ? { rawId: decoded, rawSecret: undefined } : { rawId: decoded.slice(0, colon), rawSecret: decoded.slice(colon + 1) };
}

/** RFC 6749 §2.3.1: a form-encoded Basic component, or undefined when it does not decode. */
function formDecoded(value: string): string | undefined {
  try {
    return decodeURIComponent(value.replace(/\+/g, " "));
  } catch {
    return undefined;
  }
}

function bearerOf(header: string | null | undefined): string | undefined {
  return header && /^bearer /i.test(header) ? header.slice(7).trim() || undefined : undefined;
}

/**
 * Cookie values whose signature checked out, by secret, with their token: the same value under
 * the same secret always checks out, so a session's next request skips the HMAC. Only verified
 * values are kept (a made-up one is checked every time), at most VERIFIED_MAX per secret, the
 * oldest dropped first. A hit says nothing of the session itself, which is still read.
 */
const verifiedValues = new Map<string, Map<string, string>>();
const VERIFIED_MAX = 10_000;

/**
 * The token of a signed cookie value (`<token>.<signature>`, the signature Base64
 * HMAC-SHA-256 of the token under the secret, as better-call signs and checks it), or undefined.
 */
export function verifiedCookieToken(value: string, secret: string): string | undefined {
  let known = verifiedValues.get(secret);
  const hit = known?.get(value);
  if (hit !== undefined) return hit;
  const token = checkedCookieToken(value, secret);
  if (token === undefined) return undefined;
  if (!known) verifiedValues.set(secret, (known = new Map()));
  keep(known, value, token, VERIFIED_MAX);
  return token;
}

function checkedCookieToken(value: string, secret: string): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(value);
  } catch {
    return undefined;
  }
  const dot = decoded.lastIndexOf(".");
  if (dot < 1) return undefined;
  const token = decoded.slice(0, dot);
  const signature = decoded.slice(dot + 1);
  // better-call's own test: a padded Base64 SHA-256.
  if (signature.length !== 44 || !signature.endsWith("=")) return undefined;
  const given = Buffer.from(signature, "base64");
  const expected = createHmac("sha256", secret).update(token).digest();
  return given.length === expected.length && timingSafeEqual(given, expected) ? token : undefined;
}

/**
 * The session token of better-auth's cookie (the first `*.session_token`), only when its
 * signature checks out: a made-up cookie is no session, so it cannot pick a budget of its own.
 */
function signedSessionOf(cookie: string | null, secret: string): string | undefined {
  const match = cookie ? /(?:^|;\s*)(?:__Secure-)?[\w-]+\.session_token=([^;]+)/.exec(cookie) : null;
  return match ? verifiedCookieToken(match[1]!, secret) : undefined;
}

/** A body's fields: the form's, or a JSON object's. */
type Fields = (name: string) => unknown;

function clientOf(authorization: string | null, field: Fields | undefined): ClientCredentials | undefined {
  const basic = basicCredentialsOf(authorization);
  if (basic && basic.rawSecret !== undefined && basic.rawId.length > 0) {
    const id = formDecoded(basic.rawId);
    return { id, via: "basic", authenticates: id !== undefined && basic.rawSecret.length > 0 };
  }
  if (!field) return undefined;
  const id = field("client_id");
  const via = field("client_secret") ? "secret" : field("client_assertion") ? "assertion" : "none";
  return { id: typeof id === "string" ? id : undefined, via, authenticates: via !== "none" };
}

/** The body of a client endpoint: the raw form, else the text read once more (JSON or a form). */
async function bodyOf(req: Request): Promise<{ form?: AuthRequest["form"]; field?: Fields }> {
  const raw = rawFormOf(req);
  if (raw !== undefined) {
    const params = new URLSearchParams(raw);
    return { form: { raw, params }, field: (name) => params.get(name) ?? undefined };
  }
  if (req.method !== "POST") return {};
  const json = req.headers.get("content-type")?.includes("json");
  const text = await req.clone().text().catch(() => "");
  if (!json) {
    const params = new URLSearchParams(text);
    return { form: { raw: text, params }, field: (name) => params.get(name) ?? undefined };
  }
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON: no fields */
  }
  const object = body && typeof body === "object" ? (body as Record<string, unknown>) : {};
  return { field: (name) => object[name] };
}

const records = new WeakMap<Request, AuthRequest>();

/** The record made for this request at the edge, if one was. */
export function authRequestOf(req: Request): AuthRequest | undefined {
  return records.get(req);
}

/**
 * The record of a request to better-auth (path relative to `basePath`), made once: a request
 * that already has one gets it back.
 */
export async function readAuthRequest(req: Request, basePath: string, secret: string): Promise<AuthRequest> {
  const known = records.get(req);
  if (known) return known;
  const pathname = new URL(req.url).pathname;
  const path = pathname.startsWith(basePath) ? pathname.slice(basePath.length).replace(/\/+$/, "") : pathname;
  const endpoint = authEndpointOf(path);
  const authorization = req.headers.get("authorization");
  // The Cookie header as it arrived; its signature is checked only if someone reads `sessionCookie`.
  const cookie = req.headers.get("cookie");
  let session: { token: string | undefined } | undefined;
  const record: AuthRequest = {
    path,
    endpoint,
    method: req.method,
    grantType: null,
    bearer: bearerOf(authorization),
    get sessionCookie() {
      session ??= { token: signedSessionOf(cookie, secret) };
      return session.token;
    },
  };
  if (endpoint.limit === "client") {
    const { form, field } = await bodyOf(req);
    record.form = form;
    record.client = clientOf(authorization, field);
    const grantType = path === AUTH_PATHS.token ? field?.("grant_type") : undefined;
    record.grantType = typeof grantType === "string" ? grantType : null;
  }
  records.set(req, record);
  return record;
}

/** A handler of better-auth's surface that takes the request's record. */
export type EdgeHandler = (req: Request, edge: AuthRequest) => Promise<Response>;

/** better-auth's handler for Web Requests: each request's record made once (`basePath`: where better-auth sees itself mounted). */
export function atTheEdge(handler: EdgeHandler, basePath: string, secret: string): (req: Request) => Promise<Response> {
  return async (req) => handler(req, await readAuthRequest(req, basePath, secret));
}
