import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { parseAuthToken } from "bitcoin-auth";
import type { LimitName } from "./limits.js";
import type { LimitResult, Limiters } from "./rate-limit.js";
import { AGENT_OPTIONAL_AUTH_PATHS, CLIENT_IP_HEADER } from "./transport.js";
import { rawFormOf } from "./validate.js";

/**
 * The limits of lib/limits.ts on better-auth's surface (`BASE_PATH/*`), around its handler, so
 * the app's catch-all and the pages' replayed forms (routes/pages/form-replay.ts) both pass
 * through them. better-auth's own limiter is off (auth.config.ts): this is the only one.
 *
 * Two kinds of limit:
 * - per address (people without credentials): each request is counted before it runs;
 * - per credential (clients, tokens, agents, keys, sessions): the address's failed
 *   authentications and the credential's budget are checked first, and one of them is counted
 *   after the answer. (Checked before, counted after: concurrent requests may pass the budget
 *   by as many as are in flight, which is harmless at these sizes.)
 *
 * A credential that anyone may name (a client_id, a public key, an agent's or host's id) is
 * charged only when the answer proves it was verified (`verifies`): a 2xx or 3xx from a route
 * that authenticates it, or a device grant's polling answer. Any other answer counts against
 * the caller's address: a 4xx as a failed authentication (`authFailures`), a 5xx (ours, not
 * the caller's) as a request without a credential. So a malformed body, a forged signature or
 * an unverified JWT `sub` naming someone else's credential never spends its budget. Where a
 * route serves a bare client_id or an optional JWT, that is no credential at all. A credential
 * that only its holder can name (a bearer token or session, keyed by a digest of the secret
 * itself) keeps the simpler rule: a recognised authentication failure counts against the
 * address, anything else against the credential.
 */

/** One counter to apply: a row of lib/limits.ts and the key within it. */
interface Count {
  limit: LimitName;
  key: string;
}

/** What a request is limited by: counts made before it runs, and at most one per-credential count. */
interface Plan {
  before: Count[];
  credential?: CredentialCount;
}

/** The credential a request presents: its counter key, and whether someone else could name it. */
interface Credential {
  key: string;
  /** A public identifier (client_id, public key, agent or host id), not a secret or the address. */
  named: boolean;
}

interface CredentialCount extends Credential {
  limit: CredentialLimit;
  path: string;
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

/** The `session` limit's key for a session token (lib/fast-lane.ts counts the same key). */
export const sessionLimitKey = (token: string) => `session:${digest(token)}`;

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

/**
 * RFC 6749 §2.3.1: the client_id of Basic credentials, else of the form or JSON body, and
 * whether the client authenticates (a secret, or an RFC 7523 assertion) or only names itself.
 */
async function clientOf(req: Request): Promise<{ id: string | undefined; authenticates: boolean }> {
  const header = req.headers.get("authorization");
  if (header && /^basic /i.test(header)) {
    const decoded = Buffer.from(header.slice(6).trim(), "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    if (colon > 0) {
      try {
        return { id: decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, " ")), authenticates: colon < decoded.length - 1 };
      } catch {
        return { id: undefined, authenticates: false };
      }
    }
  }
  const form = rawFormOf(req);
  if (form !== undefined) {
    const params = new URLSearchParams(form);
    return { id: params.get("client_id") ?? undefined, authenticates: Boolean(params.get("client_secret") || params.get("client_assertion")) };
  }
  if (!req.headers.get("content-type")?.includes("json")) return { id: undefined, authenticates: false };
  const body = (await req.clone().json().catch(() => null)) as { client_id?: unknown; client_secret?: unknown; client_assertion?: unknown } | null;
  return { id: typeof body?.client_id === "string" ? body.client_id : undefined, authenticates: Boolean(body?.client_secret || body?.client_assertion) };
}

/**
 * The agent or host an agent-auth JWT speaks for, unverified: an agent JWT (`typ` agent+jwt) is
 * checked against its `sub`'s key, a host JWT (host+jwt) against its `iss`'s, so a host's JWT
 * naming an agent in `sub` is counted as the host's.
 */
function agentOf(token: string): string | undefined {
  const parts = token.split(".");
  // agent-auth reads only three-part JWTs as agent or host JWTs.
  if (parts.length !== 3) return undefined;
  const [header, payload] = parts as [string, string, string];
  try {
    const { typ } = JSON.parse(Buffer.from(header, "base64url").toString("utf8")) as { typ?: unknown };
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as { sub?: unknown; iss?: unknown };
    const [kind, id] = typ === "host+jwt" ? ["host", claims.iss] : ["agent", claims.sub];
    return typeof id === "string" && id.length <= 200 ? `${kind}:${id}` : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Routes that serve a client without authenticating it when it sends no secret (RFC 7009 §2.1
 * revocation by a public client, RFC 8628 §3.1 device authorization): a bare client_id there
 * is no credential. The token endpoint is not one: its 2xx needs a grant issued to the client.
 */
const CLIENT_ID_SUFFICES = new Set(["/oauth2/revoke", "/device/code"]);

/** The credential a request presents for a per-credential limit on `path`, or undefined when it has none. */
async function credentialOf(req: Request, limit: CredentialLimit, path: string, secret: string): Promise<Credential | undefined> {
  const bearer = bearerOf(req);
  switch (limit) {
    case "client": {
      const { id, authenticates } = await clientOf(req);
      if (!id || id.length > 512 || (!authenticates && CLIENT_ID_SUFFICES.has(path))) return undefined;
      return { key: `client:${id}`, named: true };
    }
    case "token":
      return bearer ? { key: `token:${digest(bearer)}`, named: false } : undefined;
    case "agent": {
      // A JWT that agent-auth takes only optionally there is no credential (lib/transport.ts).
      if (!bearer || AGENT_OPTIONAL_AUTH_PATHS.has(path)) return undefined;
      const agent = agentOf(bearer);
      return agent ? { key: agent, named: true } : { key: `token:${digest(bearer)}`, named: false };
    }
    case "keySignIn": {
      const token = req.headers.get("x-auth-token");
      const pubkey = token && token.length <= 1024 ? parseAuthToken(token)?.pubkey : undefined;
      return pubkey ? { key: `key:${pubkey}`, named: true } : undefined;
    }
    case "session": {
      const session = signedSessionOf(req, secret) ?? bearer;
      return session ? { key: sessionLimitKey(session), named: false } : undefined;
    }
  }
}

/** OAuth errors that mean the credential was wrong (RFC 6749 §5.2), not that the client asked too early. */
const CREDENTIAL_ERRORS = new Set(["invalid_client", "invalid_grant", "invalid_token", "unauthorized_client"]);

const oauthErrorOf = async (res: Response) => ((await res.clone().json().catch(() => null)) as { error?: unknown } | null)?.error;

/** A failed authentication with a held credential (or none): counted per address, not against it. */
async function isAuthFailure(res: Response, limit: LimitName): Promise<boolean> {
  if (res.status === 401) return true;
  if (res.status !== 400 || (limit !== "client" && limit !== "token")) return false;
  const error = await oauthErrorOf(res);
  return typeof error === "string" && CREDENTIAL_ERRORS.has(error);
}

/**
 * RFC 8628 §3.5's answers to a device_code grant. better-auth gives them only once the device
 * code is found and its client authenticated as the one it was issued to (redeemDeviceCode runs
 * authorizeRedemption first), so they prove the client: a device polling is charged to it.
 */
const DEVICE_GRANT_ANSWERS = new Set(["authorization_pending", "slow_down", "access_denied", "expired_token"]);

/**
 * Whether the answer proves a named credential was verified. Every route it is named on
 * authenticates it before any 2xx or 3xx (credentialOf leaves out the routes that serve a bare
 * client_id or an optional JWT): key sign-in and sign-up check the signature, the token
 * endpoint a grant issued to the client (and its secret, if it has one), introspection and a
 * secret-bearing revocation or device authorization the secret, agent-auth the JWT. A 4xx
 * proves nothing: better-call refuses a malformed body before any of those checks, and the
 * answer does not say which came first, so even an authenticated client's invalid_request is
 * charged to its address.
 */
async function verifies(res: Response, credential: CredentialCount): Promise<boolean> {
  if (res.status < 400) return true;
  if (res.status !== 400 || credential.limit !== "client" || credential.path !== "/oauth2/token") return false;
  return DEVICE_GRANT_ANSWERS.has((await oauthErrorOf(res)) as string);
}

/** After the answer: the counter it is charged to (see the top of this file). */
async function charge(limiters: Limiters, res: Response, credential: CredentialCount, address: string): Promise<void> {
  if (!credential.named) {
    if (await isAuthFailure(res, credential.limit)) await limiters.authFailures.hit(address);
    else await limiters[credential.limit].hit(credential.key);
  } else if (await verifies(res, credential)) await limiters[credential.limit].hit(credential.key);
  else if (res.status < 500) await limiters.authFailures.hit(address);
  // A server error is ours: counted as a request without a credential, not as a failure, so an
  // outage does not hold every client behind an address back for the rest of its minute.
  else await limiters[credential.limit].hit(`ip:${address}`);
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
    // No credential at all: counted per address at the credential's budget.
    const credential = (await credentialOf(req, limit as CredentialLimit, path, options.secret)) ?? { key: `ip:${address}`, named: false };
    return { before, credential: { ...credential, limit: limit as CredentialLimit, path } };
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
    await charge(limiters, res, credential, address);
    return res;
  };
}
