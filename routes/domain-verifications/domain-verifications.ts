import { Hono, type Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { Kysely } from "kysely";
import * as v from "valibot";
import type { Auth } from "../../auth.config.js";
import { BAP_ID_PATTERN } from "../../lib/bap.js";
import { problem, problems } from "../../lib/errors.js";
import { PROBLEM_CODES } from "../../lib/problem-codes.js";
import type { Limiter } from "../../lib/rate-limit.js";
import { readJson, readQuery } from "../../lib/validate.js";
import { findOwnedIdentity } from "../../plugins/bap-identity/store.js";
import { challengeFor, type ChallengeSettings, type DomainChecks } from "../../plugins/domain-verification/checks.js";
import * as verifications from "../../plugins/domain-verification/store.js";
import { type RouteEnv } from "../middleware.js";
import type { Database } from "../../lib/db/tables.js";

/**
 * Domain verification (spec "Certificates and domain verification"; signed-in owners only):
 *
 *   POST /               bapId, domain, method (`dns` | `https`), oauthClientId? -> 201, the challenge
 *   POST /{id}/verify    looks for the challenge's record or file; verified until the validity runs out
 *   GET  /?bapId         the records of one of your profiles
 *
 * Someone else's profile or record answers like a missing one. Each check is a DNS query or an
 * outbound fetch, so a person is bounded twice: checks a minute (`domainVerify`, 429) and
 * verifications held pending (DOMAIN_VERIFICATION_MAX_PENDING, 409).
 */
export interface DomainVerificationDeps {
  auth: Auth;
  db: Kysely<Database>;
  authUrl: string;
  checks: DomainChecks;
  challenge: ChallengeSettings;
  /** DOMAIN_VERIFICATION_CHALLENGE_TTL and DOMAIN_VERIFICATION_VALIDITY, in milliseconds. */
  challengeTtlMs: number;
  validityMs: number;
  /** DOMAIN_VERIFICATION_MAX_PENDING: verifications one person may hold pending. */
  maxPending: number;
  /** Checks per user per minute: each one is a DNS query or an outbound fetch. */
  verifyLimiter: Limiter | null;
}

type DomainEnv = RouteEnv<DomainVerificationDeps>;
type C = Context<DomainEnv>;

const BapId = v.pipe(v.string(), v.regex(BAP_ID_PATTERN, "must be a BAP identity key"));
const LABEL = "[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?";
/** A host name in ASCII (IDNs as A-labels, xn--), no port or path; an IP address is no domain. */
const Domain = v.pipe(
  v.string(),
  v.maxLength(254, "must be at most 253 characters"),
  v.transform((s) => s.toLowerCase().replace(/\.$/, "")),
  v.regex(new RegExp(`^(?:${LABEL}\\.)*${LABEL}$`), "must be a domain name (letters, digits and hyphens; internationalised names as xn-- labels), without scheme, port or path"),
  v.check((s) => !/^[0-9]+$/.test(s.slice(s.lastIndexOf(".") + 1)), "must be a domain name, not an IP address"),
);
export const Create = v.strictObject({
  bapId: BapId,
  domain: Domain,
  method: v.picklist(["dns", "https"], "must be dns or https"),
  oauthClientId: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(255))),
});
export const ByBapId = v.object({ bapId: BapId });

/** A record as the API shows it: the challenge to meet, and where the verification stands. */
function view(c: C, record: verifications.DomainVerification) {
  return {
    id: record.id,
    bapId: record.bapId,
    domain: record.domain,
    method: record.method,
    oauthClientId: record.oauthClientId,
    status: verifications.statusOf(record),
    challenge: { token: record.token, ...challengeFor(c.var.deps.challenge, record), expiresAt: record.challengeExpiresAt.toISOString() },
    verifiedAt: record.verifiedAt?.toISOString() ?? null,
    expiresAt: record.expiresAt?.toISOString() ?? null,
    lastCheckedAt: record.lastCheckedAt?.toISOString() ?? null,
    failureReason: record.failureReason,
    createdAt: record.createdAt.toISOString(),
  };
}

async function ownedIdentity(c: C, bapId: string) {
  const row = await findOwnedIdentity(c.var.deps.db, c.var.session.user.id, bapId);
  if (!row) throw problems.notFound("You have no BAP identity with that bapId.");
  return row;
}

/**
 * The pending cap: a pending verification may be checked again and again until its challenge
 * runs out. Counted before the insert, so concurrent requests may pass it by as many as are in
 * flight, which is harmless at this size.
 */
async function refuseOverPendingCap(c: C, userId: string, now: Date) {
  const { maxPending } = c.var.deps;
  const { count, firstExpiry } = await verifications.pendingVerifications(c.var.deps.db, userId, now);
  if (count < maxPending) return;
  const detail = `You hold ${count} pending domain verifications (at most ${maxPending}): verify one, or wait until the first challenge expires${firstExpiry ? ` at ${firstExpiry.toISOString()}` : ""}.`;
  throw problem(PROBLEM_CODES.DOMAIN_VERIFICATION_PENDING_LIMIT, { detail });
}

async function create(c: C) {
  const { value: body } = await readJson(c, Create, 4 * 1024);
  const { db, challengeTtlMs } = c.var.deps;
  const userId = c.var.session.user.id;
  const identity = await ownedIdentity(c, body.bapId);
  if (identity.suspendedAt) throw problem(PROBLEM_CODES.IDENTITY_SUSPENDED, { detail: "Confirm this identity on your account page before verifying domains for it." });
  // A domain may speak for a client only on its owner's word: registration is open, so anyone
  // could otherwise lend their verified domain to someone else's look-alike app.
  if (body.oauthClientId && !(await verifications.ownsClient(db, userId, body.oauthClientId))) throw problem(PROBLEM_CODES.OAUTH_CLIENT_NOT_OWNED);
  const now = new Date();
  await refuseOverPendingCap(c, userId, now);
  const record = await verifications.createVerification(
    db,
    userId,
    { bapId: body.bapId, domain: body.domain, method: body.method, oauthClientId: body.oauthClientId ?? null, challengeExpiresAt: new Date(now.getTime() + challengeTtlMs) },
    now,
  );
  return c.json(view(c, record), 201);
}

/** After `signedIn`: RFC 6585 §4, 429 with Retry-After past the user's checks a minute. */
const verifyQuota = createMiddleware<DomainEnv>(async (c, next) => {
  const limiter = c.var.deps.verifyLimiter;
  if (limiter) {
    const { allowed, retryAfter } = await limiter.hit(c.var.session.user.id);
    if (!allowed) throw problems.tooManyRequests(retryAfter);
  }
  await next();
});

async function verify(c: C) {
  const { db, checks, challenge, validityMs } = c.var.deps;
  const record = await verifications.findOwnedVerification(db, c.var.session.user.id, c.req.param("id") ?? "");
  if (!record) throw problem(PROBLEM_CODES.DOMAIN_VERIFICATION_NOT_FOUND);
  if (!verifications.canVerify(record)) throw problem(PROBLEM_CODES.DOMAIN_CHALLENGE_EXPIRED);
  const outcome = await checks.check(challengeFor(challenge, record));
  const updated = await verifications.recordCheck(db, record, outcome, validityMs);
  if (!outcome.ok) throw problem(PROBLEM_CODES.DOMAIN_NOT_VERIFIED, { detail: outcome.reason });
  return c.json(view(c, updated), 200);
}

async function list(c: C) {
  const { bapId } = readQuery(c, ByBapId);
  await ownedIdentity(c, bapId);
  const records = await verifications.listVerifications(c.var.deps.db, c.var.session.user.id, bapId);
  return c.json({ verifications: records.map((record) => view(c, record)) }, 200);
}

/** The domain-verifications family (app.ts): /api/domain-verifications, signed in, same site, no-store. */
export const domainVerificationRoutes = new Hono<DomainEnv>()
  .post("/", create)
  .get("/", list)
  .post("/:id/verify", verifyQuota, verify);
