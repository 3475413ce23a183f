import type { Kysely } from "kysely";
import { createMiddleware } from "hono/factory";
import * as v from "valibot";
import { BAP_ID_PATTERN } from "../../lib/bap.js";
import { isCompressedPubkey, type BitcoinAuthPolicy } from "../../lib/bitcoin-auth.js";
import { problems } from "../../lib/errors.js";
import type { Limiter } from "../../lib/rate-limit.js";
import { registrationRecord } from "../../plugins/bap-identity/registrations.js";
import * as identities from "../../plugins/bap-identity/store.js";
import type { RouteDeps, RouteEnv } from "../middleware.js";
import type { Database } from "../../lib/db/tables.js";

/**
 * What the two BAP profile resources share (spec "Profile" table): the user's registered
 * identities (./user-bap-ids.ts) and their profiles, drafts and publications
 * (./bap-profile.ts). Profile data is user-authored: nothing here is a verified e-mail.
 */
export interface ProfileDeps extends RouteDeps {
  db: Kysely<Database>;
  bitcoinAuth: BitcoinAuthPolicy;
  /** Writes per signed-in user per window (`profileWrite` in lib/limits.ts); null turns the limit off. */
  writeLimiter: Limiter | null;
}

export type ProfileEnv = RouteEnv<ProfileDeps>;

export const BapId = v.pipe(v.string(), v.regex(BAP_ID_PATTERN, "must be a BAP identity key"));
export const Pubkey = v.pipe(v.string(), v.check((s: string) => isCompressedPubkey(s), "must be a compressed secp256k1 public key in hex"));
export const ByBapId = v.object({ bapId: BapId });

/** What anyone may look up during login: no account link, no metadata. */
export function publicRecord(row: identities.BapIdentity) {
  const { id, identity_key, root_address, current_address, identity } = registrationRecord(row);
  return { id, identity_key, root_address, current_address, identity };
}

/**
 * After `signedIn`: the writer within their quota. Every write here is a database write a
 * session can repeat at will, so each user gets a fixed number a minute (OWASP ASVS 4.0
 * V11.1.4, anti-automation), counted per user rather than per address so one account cannot
 * spread its writes over many addresses. RFC 6585 §4: 429 with Retry-After.
 */
export const writeQuota = createMiddleware<ProfileEnv>(async (c, next) => {
  const limiter = c.var.deps.writeLimiter;
  if (limiter) {
    const { allowed, retryAfter } = await limiter.hit(c.var.session.user.id);
    if (!allowed) throw problems.tooManyRequests(retryAfter);
  }
  await next();
});
