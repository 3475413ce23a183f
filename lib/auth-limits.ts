import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { parseAuthToken } from "bitcoin-auth";
import type { LimitName } from "./limits.js";
import type { LimitResult, Limiters } from "./rate-limit.js";
import { CLIENT_IP_HEADER } from "./transport.js";
import { rawFormOf } from "./validate.js";

/**
 * The limits of lib/limits.ts on better-auth's surface (`BASE_PATH/*`), around its handler, so
 * the app's catch-all and the pages' replayed forms (routes/pages/form-replay.ts) both pass
 * through them. better-auth's own limiter is off (auth.config.ts): this is the only one.
 *
 * Two kinds of limit:
 * - per address (people without credentials): each request is counted before it runs;
 * - per credential (clients, tokens, agents, keys, sessions): the address's failed
 *   authentications and the credential's budget are checked first; after the answer, a failure
 *   counts against the address (`authFailures`) and anything else against the credential. A
 *   caller naming someone else's client_id or key with a bad secret or signature never spends
 *   that client's budget. (Checked before, counted after: concurrent requests may pass the
 *   budget by as many as are in flight, which is harmless at these sizes.)
 */

/** One counter to apply: a row of lib/limits.ts and the key within it. */
interface Count {
  limit: LimitName;
  key: string;
}

/** What a request is limited by: counts made before it runs, and at most one per-credential count. */
interface Plan {
  before: Count[];
  credential?: { limit: LimitName; key: string };
}

type CredentialLimit = "client" | "token" | "agent" | "session" | "keySignIn";

const PASSWORD_CHECKS = new Set(["/sign-in/email", "/sign-in/username", "/change-email", "/change-password"]);
const ACCOUNT_MAIL = new Set(["/request-password-reset", "/send-verification-email"]);
const USER_CODE_ROUTES = new Set(["/device", "/device/approve", "/device/deny"]);
const APPROVALS = new Set(["/agent-approval", "/agent/approve-capability"]);
const CLIENT_ROUTES = new Set(["/oauth2/token", "/oauth2/introspect", "/oauth2/revoke", "/device/code"]);

/** The per-address limit of a path, or the per-credential limit it falls under. */
function limitOf(path: string, keyRoutes: ReadonlySet<string>, hasSession: boolean): LimitName {
  if (keyRoutes.has(path)) return "keySignIn";
  if (PASSWORD_CHECKS.has(path) || path.startsWith("/two-factor/verify-")) return "passwordCheck";
  if (path.startsWith("/sign-up/")) return "signUp";
  if (ACCOUNT_MAIL.has(path) || path.startsWith("/forget-password") || path.startsWith("/reset-password")) return "accountMail";
  if (path === "/oauth2/register") return "register";
  if (USER_CODE_ROUTES.has(path)) return "deviceUserCode";
  if (APPROVALS.has(path)) return "approval";
  if (CLIENT_ROUTES.has(path)) return "client";
  if (path === "/oauth2/userinfo" || path.startsWith("/oauth2/register/")) return "token";
  if (path.startsWith("/agent/") || path.startsWith("/capability/")) return "agent";
  return hasSession ? "session" : "anonymous";
}

const CREDENTIAL_LIMITS: ReadonlySet<LimitName> = new Set<CredentialLimit>(["client", "token", "agent", "session", "keySignIn"]);

const digest = (value: string) => createHash("sha256").update(value).digest("base64url").slice(0, 32);

function bearerOf(req: Request): string | undefined {
  const header = req.headers.get("authorization");
  return header && /^bearer /i.test(header) ? header.slice(7).trim() || undefined : undefined;
}

/**
 * The session token of better-auth's cookie (`<token>.<signature>`, the signature Base64
 * HMAC-SHA-256 of the token under the secret, as better-call signs it), only when the signature
 * checks out: a made-up cookie is no session here, so it cannot pick a budget of its own.
 */
function signedSessionOf(req: Request, secret: string): string | undefined {
  const cookie = req.headers.get("cookie");
  if (!cookie) return undefined;
  const match = /(?:^|;\s*)(?:__Secure-)?[\w-]+\.session_token=([^;]+)/.exec(cookie);
  if (!match) return undefined;
  let value: string;
  try {
    value = decodeURIComponent(match[1]!);
  } catch {
    return undefined;
  }
  const dot = value.lastIndexOf(".");
  if (dot < 1) return undefined;
  const token = value.slice(0, dot);
  const given = Buffer.from(value.slice(dot + 1), "base64");
  const expected = createHmac("sha256", secret).update(token).digest();
  return given.length === expected.length && timingSafeEqual(given, expected) ? token : undefined;
}

/** RFC 6749 §2.3.1: the client_id of Basic credentials, else of the form or JSON body. */
async function clientIdOf(req: Request): Promise<string | undefined> {
  const header = req.headers.get("authorization");
  if (header && /^basic /i.test(header)) {
    const decoded = Buffer.from(header.slice(6).trim(), "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    if (colon > 0) {
      try {
        return decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, " "));
      } catch {
        return undefined;
      }
    }
  }
  const form = rawFormOf(req);
  if (form !== undefined) return new URLSearchParams(form).get("client_id") ?? undefined;
  if (!req.headers.get("content-type")?.includes("json")) return undefined;
  const body = (await req.clone().json().catch(() => null)) as { client_id?: unknown } | null;
  return typeof body?.client_id === "string" ? body.client_id : undefined;
}

/** The agent (or host) an agent JWT speaks for, from its claims; verified by agent-auth after. */
function agentOf(token: string): string | undefined {
  const payload = token.split(".")[1];
  if (!payload) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as { sub?: unknown; iss?: unknown };
    const id = typeof claims.sub === "string" ? claims.sub : typeof claims.iss === "string" ? claims.iss : undefined;
    return id && id.length <= 200 ? id : undefined;
  } catch {
    return undefined;
  }
}

/** The credential a request presents for a per-credential limit, or undefined when it has none. */
async function credentialOf(req: Request, limit: CredentialLimit, secret: string): Promise<string | undefined> {
  const bearer = bearerOf(req);
  switch (limit) {
    case "client": {
      const id = await clientIdOf(req);
      return id && id.length <= 512 ? `client:${id}` : undefined;
    }
    case "token":
      return bearer ? `token:${digest(bearer)}` : undefined;
    case "agent": {
      const agent = bearer ? agentOf(bearer) : undefined;
      return agent ? `agent:${agent}` : bearer ? `token:${digest(bearer)}` : undefined;
    }
    case "keySignIn": {
      const token = req.headers.get("x-auth-token");
      const pubkey = token && token.length <= 1024 ? parseAuthToken(token)?.pubkey : undefined;
      return pubkey ? `key:${pubkey}` : undefined;
    }
    case "session": {
      const session = signedSessionOf(req, secret) ?? bearer;
      return session ? `session:${digest(session)}` : undefined;
    }
  }
}

/** OAuth errors that mean the credential was wrong (RFC 6749 §5.2), not that the client asked too early. */
const CREDENTIAL_ERRORS = new Set(["invalid_client", "invalid_grant", "invalid_token", "unauthorized_client"]);

/** A failed authentication: counted per address, never against the named credential. */
async function isAuthFailure(res: Response, limit: LimitName): Promise<boolean> {
  if (res.status === 401) return true;
  // Key sign-in answers 403 for a key that holds no identity: a guess as much as a bad signature.
  if (res.status === 403 && limit === "keySignIn") return true;
  if (res.status !== 400 || (limit !== "client" && limit !== "token")) return false;
  const body = (await res.clone().json().catch(() => null)) as { error?: unknown } | null;
  return typeof body?.error === "string" && CREDENTIAL_ERRORS.has(body.error);
}

/**
 * The answer better-auth's own limiter gave, `{message}`, with Retry-After (RFC 6585 §4); the
 * app's catch-all rewrites it as an RFC 6749 error on the OAuth endpoints (lib/respond.ts asOAuthError).
 */
function tooManyRequests({ retryAfter }: LimitResult): Response {
  return Response.json(
    { message: "Too many requests. Please try again later." },
    { status: 429, headers: { "retry-after": String(retryAfter), "cache-control": "no-store" } },
  );
}

export interface AuthLimitOptions {
  /** Where better-auth is mounted (BASE_PATH). */
  basePath: string;
  /** Key sign-in's service name: /sign-in/<name> and /sign-up/<name> are limited per key. */
  keyServiceName: string;
  /** better-auth's secret: a session cookie counts as a session only with a valid signature. */
  secret: string;
}

/** better-auth's request handler with the limits applied; the handler itself when limits are off. */
export function limitAuthHandler(handler: (req: Request) => Promise<Response>, limiters: Limiters | null, options: AuthLimitOptions) {
  if (!limiters) return handler;
  const keyRoutes = new Set([`/sign-in/${options.keyServiceName}`, `/sign-up/${options.keyServiceName}`]);

  async function planOf(req: Request, address: string): Promise<Plan> {
    const pathname = new URL(req.url).pathname;
    const path = pathname.startsWith(options.basePath) ? pathname.slice(options.basePath.length).replace(/\/+$/, "") : pathname;
    const cookieSession = signedSessionOf(req, options.secret);
    const hasSession = Boolean(cookieSession ?? bearerOf(req));
    const limit = limitOf(path, keyRoutes, hasSession);
    if (!CREDENTIAL_LIMITS.has(limit)) return { before: [{ limit, key: address }] };
    // Key sign-in keeps a high ceiling per address besides its count per key; so does a session
    // presented as a bearer token, which is counted before better-auth checks it (a made-up one
    // is no failure there). A cookie's signature is checked here, so a signed one needs none.
    const ceiling = limit === "keySignIn" ? "keySignInAddress" : limit === "session" && !cookieSession ? "sessionAddress" : null;
    const before: Count[] = ceiling ? [{ limit: ceiling, key: address }] : [];
    // No credential at all: counted per address at the credential's budget (it is bound to fail).
    const key = (await credentialOf(req, limit as CredentialLimit, options.secret)) ?? `ip:${address}`;
    return { before, credential: { limit, key } };
  }

  return async function limitedHandler(req: Request): Promise<Response> {
    const address = req.headers.get(CLIENT_IP_HEADER) ?? "unknown";
    const plan = await planOf(req, address);
    for (const { limit, key } of plan.before) {
      const counted = await limiters[limit].hit(key);
      if (!counted.allowed) return tooManyRequests(counted);
    }
    const { credential } = plan;
    if (!credential) return handler(req);
    // An address that keeps failing to authenticate is refused before any work; then the credential's own budget.
    const [failures, budget] = await Promise.all([limiters.authFailures.check(address), limiters[credential.limit].check(credential.key)]);
    if (!failures.allowed) return tooManyRequests(failures);
    if (!budget.allowed) return tooManyRequests(budget);
    const res = await handler(req);
    if (await isAuthFailure(res, credential.limit)) await limiters.authFailures.hit(address);
    else await limiters[credential.limit].hit(credential.key);
    return res;
  };
}
