import type { OAuthExtensionGrantHandler } from "@better-auth/oauth-provider";
import { createHash } from "node:crypto";
import { decodeJwt, errors, jwtVerify, type JWTPayload } from "jose";
import * as v from "valibot";
import { checkOAuthParams } from "../../lib/validate.js";
import { consumeAssertionKey, findResourceRow } from "../oauth-store/adapter.js";
import { IssuerUnavailable, trustedKeySets } from "./issuers.js";
import { CLOCK_SKEW, ID_JAG_TYP, MAX_ASSERTION_LIFETIME, refuse, type IdJagOptions } from "./options.js";

const ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"];

/** RFC 7523 §2.1; `scope` and `resource` may narrow what the assertion names. */
const BearerRequest = v.looseObject({
  assertion: v.pipe(v.string("assertion is required (RFC 7523 §2.1)"), v.minLength(1), v.maxLength(8192)),
  scope: v.optional(v.pipe(v.string(), v.maxLength(2048))),
  resource: v.optional(v.pipe(v.string("name one resource"), v.minLength(1), v.maxLength(2048))),
});

/** The trusted issuer's signature, `typ`, `aud` us, and a short life that has not ended; else invalid_grant. */
async function verified(keySets: ReturnType<typeof trustedKeySets>, options: IdJagOptions, assertion: string): Promise<JWTPayload & { iss: string }> {
  let unverified: JWTPayload;
  try {
    unverified = decodeJwt(assertion);
  } catch {
    refuse("invalid_grant", "the assertion is not a JWT");
  }
  const issuer = unverified.iss;
  if (typeof issuer !== "string" || !options.trustedIssuers.includes(issuer)) refuse("invalid_grant", "the assertion's issuer is not trusted here");
  const check = { issuer, audience: options.issuer, typ: ID_JAG_TYP, algorithms: ALGORITHMS, clockTolerance: CLOCK_SKEW, requiredClaims: ["exp", "iat", "jti", "sub", "client_id"] };
  for (const fresh of [false, true]) {
    try {
      const { payload } = await jwtVerify(assertion, await keySets.keys(issuer, fresh), check);
      return payload as JWTPayload & { iss: string };
    } catch (err) {
      if (err instanceof IssuerUnavailable) refuse("invalid_grant", `the issuer's keys are not available: ${err.message}`);
      // The issuer may have rotated its keys: fetch them once more.
      if (err instanceof errors.JWKSNoMatchingKey && !fresh) continue;
      if (err instanceof errors.JWTExpired) refuse("invalid_grant", "the assertion has expired");
      if (err instanceof errors.JWTClaimValidationFailed) refuse("invalid_grant", `the assertion's ${err.claim} is not accepted (${err.reason})`);
      if (err instanceof errors.JOSEError) refuse("invalid_grant", "the assertion's signature does not verify");
      throw err;
    }
  }
  refuse("invalid_grant", "the assertion's signature does not verify");
}

/**
 * A `jti` is redeemed once, on every instance: a tombstone (plugins/oauth-store) keyed by a hash
 * of issuer and `jti`, until the assertion's `exp`.
 */
async function consumeJti(adapter: Parameters<OAuthExtensionGrantHandler>[0]["ctx"]["context"]["adapter"], issuer: string, jti: string, exp: number) {
  const id = createHash("sha256").update(`id-jag:${issuer}:${jti}`).digest("base64url").slice(0, 32);
  if (!(await consumeAssertionKey(adapter, id, new Date(exp * 1000)))) refuse("invalid_grant", "the assertion was already used");
}

/**
 * The resource authorization server's side of ID-JAG (the draft's §5): the JWT bearer grant
 * (RFC 7523 §2.1) redeems an assertion from one of ID_JAG_TRUSTED_ISSUERS for the client it
 * names (`client_id` must be the authenticated client), once, within its short life, for a
 * resource of ours the resource policy gives that client. The person must already have an
 * account here: the assertion's `email` must be the verified e-mail of one (else invalid_grant).
 * The answer is our access token for that person; no refresh token (a new assertion is the way
 * to continue).
 */
export function redeemAssertion(options: IdJagOptions): OAuthExtensionGrantHandler {
  const keySets = trustedKeySets(options.safeFetch);
  return async ({ ctx, opts, provider }) => {
    const { client } = await provider.authenticateClient();
    const request = checkOAuthParams(BearerRequest, ctx.body);
    const claims = await verified(keySets, options, request.assertion);
    const now = Math.floor(Date.now() / 1000);
    const { exp, iat, jti } = claims as { exp: number; iat: number; jti: unknown };
    if (typeof jti !== "string" || !jti || jti.length > 255) refuse("invalid_grant", "the assertion's jti is not accepted");
    if (iat > now + CLOCK_SKEW) refuse("invalid_grant", "the assertion is issued in the future");
    if (exp - iat > MAX_ASSERTION_LIFETIME) refuse("invalid_grant", `the assertion lives longer than ${MAX_ASSERTION_LIFETIME} seconds`);
    if (claims.client_id !== client.clientId) refuse("invalid_grant", "the assertion is for another client");

    // RFC 8707: the assertion's resource, or the one named; both must agree.
    const named = request.resource;
    const asserted = typeof claims.resource === "string" ? claims.resource : undefined;
    if (claims.resource !== undefined && asserted === undefined) refuse("invalid_grant", "the assertion names more than one resource");
    if (named && asserted && named !== asserted) refuse("invalid_target", "the resource is not the one the assertion names");
    const identifier = named ?? asserted;
    let resources: string[] | undefined;
    if (identifier) {
      const row = await options.policy.resolve(ctx as never, { identifier, clientId: client.clientId, resources: [identifier], row: await findResourceRow(ctx.context.adapter, identifier) });
      if (!row || row.disabled) refuse("invalid_target", `resource ${identifier} is not available`);
      resources = [identifier];
    }

    // Scopes: the assertion's (narrowed by the request's), within what the client may have; never offline_access.
    const asked = typeof claims.scope === "string" ? claims.scope.split(" ").filter(Boolean) : [];
    const requested = request.scope === undefined ? asked : [...new Set(request.scope.split(" ").filter(Boolean))];
    const wider = requested.filter((s) => !asked.includes(s));
    if (wider.length) refuse("invalid_scope", `the assertion does not carry ${wider.join(" ")}`);
    const allowed: readonly string[] | undefined = client.scopes ?? opts.scopes;
    const scopes = requested.filter((s) => s !== "offline_access" && (!allowed || allowed.includes(s)));
    if (!scopes.length) refuse("invalid_scope", "the assertion carries no scope this client may have");

    const email = typeof claims.email === "string" ? claims.email : undefined;
    const found = email ? await ctx.context.internalAdapter.findUserByEmail(email.toLowerCase()) : null;
    if (!found?.user.emailVerified) refuse("invalid_grant", "the assertion names no person with a verified e-mail address here");

    await consumeJti(ctx.context.adapter, claims.iss, jti, exp);
    const tokens = await provider.issueTokens({ client, scopes, user: found.user, ...(resources ? { resources } : {}) });
    return ctx.json({ ...tokens, refresh_token: undefined }) as never;
  };
}
