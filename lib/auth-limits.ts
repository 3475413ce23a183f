import { createHash } from "node:crypto";
import { keep } from "./kept.js";
import { parseAuthToken } from "bitcoin-auth";
import { AUTH_PATHS } from "./auth-endpoints.js";
import type { AuthRequest, EdgeHandler } from "./auth-request.js";
import type { LimitName } from "./limits.js";
import { checkAll, type LimitResult, type Limiters } from "./rate-limit.js";
import { CLIENT_IP_HEADER } from "./client-address.js";

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

/** The limit of lib/limits.ts a request falls under (the endpoint table's, key sign-in aside). */
function limitOf(edge: AuthRequest, keyRoutes: ReadonlySet<string>): LimitName {
  if (keyRoutes.has(edge.path)) return "keySignIn";
  const { limit } = edge.endpoint;
  if (limit !== "session") return limit;
  return edge.sessionCookie ?? edge.bearer ? "session" : "anonymous";
}

const CREDENTIAL_LIMITS: ReadonlySet<LimitName> = new Set<CredentialLimit>(["client", "token", "agent", "session", "keySignIn"]);

/**
 * Digests already taken, by value (a client or page sends the same credential again and again);
 * the oldest dropped first. Only values of a token's size are kept: a bearer value is unverified
 * here, and a long one must not hold its length in memory.
 */
const digests = new Map<string, string>();
const DIGESTS_KEPT = 4096;
const DIGESTED_MAX_LENGTH = 256;

function digest(value: string): string {
  const known = digests.get(value);
  if (known !== undefined) return known;
  const taken = createHash("sha256").update(value).digest("base64url").slice(0, 32);
  if (value.length <= DIGESTED_MAX_LENGTH) keep(digests, value, taken, DIGESTS_KEPT);
  return taken;
}

/** The `token` limit's key for a bearer token (the fast lane's userinfo counts the same key). */
export const tokenLimitKey = (token: string) => `token:${digest(token)}`;

/** The `session` limit's key for a session token (lib/fast-lane.ts counts the same key). */
export const sessionLimitKey = (token: string) => `session:${digest(token)}`;

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

/** The credential a request presents for a per-credential limit, or undefined when it has none. */
function credentialOf(edge: AuthRequest, req: Request, limit: CredentialLimit): Credential | undefined {
  const { bearer } = edge;
  switch (limit) {
    case "client": {
      const { id, authenticates } = edge.client ?? {};
      if (!id || id.length > 512 || (!authenticates && edge.endpoint.clientIdSuffices)) return undefined;
      return { key: `client:${id}`, named: true };
    }
    case "token":
      return bearer ? { key: tokenLimitKey(bearer), named: false } : undefined;
    case "agent": {
      // A JWT that agent-auth takes only optionally there is no credential (lib/auth-endpoints.ts).
      if (!bearer || edge.endpoint.optionalAgentJwt) return undefined;
      const agent = agentOf(bearer);
      return agent ? { key: agent, named: true } : { key: tokenLimitKey(bearer), named: false };
    }
    case "keySignIn": {
      const token = req.headers.get("x-auth-token");
      const pubkey = token && token.length <= 1024 ? parseAuthToken(token)?.pubkey : undefined;
      return pubkey ? { key: `key:${pubkey}`, named: true } : undefined;
    }
    case "session": {
      const session = edge.sessionCookie ?? bearer;
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
  if (res.status !== 400 || credential.limit !== "client" || credential.path !== AUTH_PATHS.token) return false;
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

/** better-auth's request handler with the limits applied; the handler itself when limits are off. */
export function limitAuthHandler(handler: EdgeHandler, limiters: Limiters | null, options: { keyServiceName: string }): EdgeHandler {
  if (!limiters) return handler;
  const keyRoutes = new Set([`/sign-in/${options.keyServiceName}`, `/sign-up/${options.keyServiceName}`]);

  function planOf(req: Request, edge: AuthRequest, address: string): Plan {
    const limit = limitOf(edge, keyRoutes);
    if (!CREDENTIAL_LIMITS.has(limit)) return { before: [{ limit, key: address }] };
    // Key sign-in keeps a high ceiling per address besides its count per key; so does a session
    // presented as a bearer token, which is counted before better-auth checks it (a made-up one
    // is no failure there). A cookie's signature is checked at the edge, so a signed one needs none.
    const ceiling = limit === "keySignIn" ? "keySignInAddress" : limit === "session" && !edge.sessionCookie ? "sessionAddress" : null;
    const before: Count[] = ceiling ? [{ limit: ceiling, key: address }] : [];
    // No credential at all: counted per address at the credential's budget.
    const credential = credentialOf(edge, req, limit as CredentialLimit) ?? { key: `ip:${address}`, named: false };
    return { before, credential: { ...credential, limit: limit as CredentialLimit, path: edge.path } };
  }

  return async function limitedHandler(req, edge) {
    const address = req.headers.get(CLIENT_IP_HEADER) ?? "unknown";
    const plan = planOf(req, edge, address);
    const { credential } = plan;
    // An address that keeps failing to authenticate is refused before any work; then the
    // credential's own budget. Only read, so it is asked beside the address's ceiling (one
    // round trip to Redis for both), and its answer counts only once the ceiling let the request by.
    const checking = credential ? checkAll(limiters, [["authFailures", address], [credential.limit, credential.key]]) : null;
    checking?.catch(() => {}); // its failure is met below, after the ceiling's
    for (const { limit, key } of plan.before) {
      const counted = await limiters[limit].hit(key);
      if (!counted.allowed) return tooManyRequests(counted);
    }
    if (!credential || !checking) return handler(req, edge);
    const checked = await checking;
    if (!checked.allowed) return tooManyRequests(checked);
    const res = await handler(req, edge);
    // Counted while the answer goes out, not before it: the count changes nothing in this
    // answer, and waiting for it was one more Redis round trip in every credentialed request.
    // What charge reads of the answer it reads now (a clone, taken in this call), and its
    // command leaves on the one Redis connection before any later request's check, which Redis
    // then answers after it. hit never throws (a store failure fails open).
    void charge(limiters, res, credential, address).catch(() => {});
    return res;
  };
}
