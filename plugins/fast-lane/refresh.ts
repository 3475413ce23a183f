import { createHash, KeyObject, sign } from "node:crypto";
import type { AuthContext } from "better-auth";
import { resolveSigningKey, signJWT } from "better-auth/plugins";
import type { RefreshClientRow, RefreshGrant, RefreshGrantStore, RefreshUserRow } from "../oauth-store/refresh.js";
import { AUTH_PATHS } from "../../lib/auth-endpoints.js";
import type { EdgeHandler } from "../../lib/auth-request.js";
import { clientBudget, clientLaneRoute, NO_STORE, plainBasic, secretMatches, sha256 } from "./client-credentials.js";
import type { LaneRequest, LaneRoute } from "../../lib/fast-lane.js";
import { UNAVAILABLE_RETRY_AFTER } from "../../lib/errors.js";
import type { Metrics } from "../../lib/metrics.js";
import type { Logger } from "../../lib/logger.js";
import type { DatabaseHandle } from "../../lib/db/connection.js";
import { refreshGrantStore } from "../oauth-store/refresh.js";
import { timeOrderedId } from "../../lib/db/ids.js";
import { randomString, TOKEN_ALPHABET } from "../../lib/random.js";
import { clientUseRecorder } from "../registration-management/store.js";
import type { AnalyticsCounter } from "../analytics/counter.js";

/**
 * The refresh-token grant (RFC 6749 §6) of a confidential client, answered from one prepared
 * read and one short transaction instead of better-auth's endpoint pipeline.
 *
 * Why: on SQLite the generic grant runs inside lib/atomic-refresh.ts's transaction, which holds
 * the one connection from its first write to its commit, across oauth-provider's pipeline and
 * the ID token's RSA signature; every refresh, and every other query, waited for the one before
 * it (docs/benchmarks.md, "The refresh grant"). Here everything that needs no database (the
 * checks, the random tokens and their hashes, the ID token's signature) is done first, and the
 * transaction only revokes the presented token if it is still unrevoked (a compare and set),
 * inserts the new refresh and access tokens, and commits.
 *
 * It answers only the common case, and only with a new token pair; everything else, every
 * refusal included, goes to @better-auth/oauth-provider's own endpoint (`null`), so errors,
 * reuse detection (which revokes the whole family, and the audit log records it) and edge cases
 * stay exactly its own. The common case, with every check the generic path makes for it:
 *   1. a form of only `grant_type=refresh_token`, `refresh_token` and optionally `scope`, each
 *      once; RFC 6749 §2.3.1 Basic credentials of plain unreserved characters; no DPoP proof,
 *      no member-key signature, no cookie and no Origin (the app's CORS and origin rules);
 *   2. the client is registered here (no metadata document), not disabled, registered for
 *      client_secret_basic and for the refresh_token grant, has no member key, does not require
 *      DPoP-bound tokens, uses public subject identifiers, and the secret's SHA-256 matches the
 *      stored hash in constant time (`storeClientSecret: "hashed"`);
 *   3. the token (by its SHA-256, `storeTokens: "hashed"`) is this client's, unexpired,
 *      unrevoked, bound to no resource (RFC 8707) and no key (DPoP/mTLS), granted with
 *      `offline_access`, and its user still exists;
 *   4. `scope`, when given, only narrows: each scope is one the token was granted and the
 *      client may ask for.
 * The new tokens are what oauth-provider's `createUserTokens` issues for such a grant: opaque
 * access and refresh tokens with the same lifetimes, rows, scopes and session, and, with
 * `openid`, an ID token with the same claims (its extensions' claims included), signed by
 * better-auth's jwt plugin with the same key. tests/oauth/fast-refresh.test.ts runs each case
 * both ways and compares answers and stored rows.
 *
 * The options it relies on are checked once ({@link unsupportedOption}); with any other
 * configuration the lane answers nothing and every refresh takes the generic path.
 */

/** oauth-provider's options as far as the fast refresh depends on them. */
export interface ProviderOptions {
  storeTokens?: unknown;
  storeClientSecret?: unknown;
  prefix?: { refreshToken?: string; opaqueAccessToken?: string };
  formatRefreshToken?: unknown;
  generateRefreshToken?: unknown;
  generateOpaqueAccessToken?: unknown;
  scopeExpirations?: unknown;
  customTokenResponseFields?: unknown;
  customIdTokenClaims?: unknown;
  cachedTrustedClients?: Set<string>;
  refreshTokenReuseInterval?: number;
  disableJwtPlugin?: boolean;
  grantTypes?: string[];
  accessTokenExpiresIn?: number;
  refreshTokenExpiresIn?: number;
  idTokenExpiresIn?: number;
  extensions?: { claims?: { idToken?: (input: Record<string, unknown>) => unknown } }[];
}

/** What the fast refresh reads of better-auth's context; the jwt plugin's signing takes the whole of it. */
export type RefreshContext = Pick<AuthContext, "getPlugin" | "generateId" | "baseURL" | "options">;

interface JwtOptions {
  jwt?: { issuer?: string; sign?: unknown };
}

export interface FastRefreshOptions {
  store: RefreshGrantStore;
  /** better-auth's context (`auth.$context`): its oauth-provider and jwt plugins' options, ids, keys. */
  context: Promise<RefreshContext>;
  /** The endpoint's public path (BASE_PATH + /oauth2/token). */
  path: string;
  /** Called once a pair is issued: what the generic path's after-hooks record (metrics, the client's use). */
  issued(clientId: string): void;
  /** A failed rotation (the answer is then a 503, and the presented token stays valid when nothing committed). */
  failed(err: unknown): void;
}

const FORM_FIELDS = new Set(["grant_type", "refresh_token", "scope"]);


/** Why the configuration is not one the fast refresh reproduces, or null when it is. */
export function unsupportedOption(provider: ProviderOptions, jwt: JwtOptions | undefined): string | null {
  if ((provider.storeTokens ?? "hashed") !== "hashed") return "storeTokens is not hashed";
  if ((provider.storeClientSecret ?? "hashed") !== "hashed") return "storeClientSecret is not hashed";
  if (provider.prefix?.refreshToken || provider.prefix?.opaqueAccessToken) return "token prefixes";
  if (provider.formatRefreshToken || provider.generateRefreshToken || provider.generateOpaqueAccessToken) return "custom token formats";
  if (provider.scopeExpirations || provider.customTokenResponseFields || provider.customIdTokenClaims) return "custom expirations, fields or ID-token claims";
  if (provider.cachedTrustedClients?.size) return "trusted-client cache";
  if ((provider.refreshTokenReuseInterval ?? 0) > 0) return "a refresh-token reuse interval (replayed answers)";
  if (provider.disableJwtPlugin || !jwt || jwt.jwt?.sign) return "ID tokens not signed by the jwt plugin's keys";
  if (!provider.grantTypes?.includes("refresh_token")) return "the refresh_token grant is off";
  return null;
}

/** OIDC Core §3.1.3.6 at_hash for the signing algorithm, as oauth-provider computes it. */
function atHash(token: string, alg: string): string {
  const hash = alg === "EdDSA" || alg.endsWith("512") ? "sha512" : alg.endsWith("384") ? "sha384" : "sha256";
  const digest = createHash(hash).update(token).digest();
  return digest.subarray(0, digest.length / 2).toString("base64url");
}

const rsaKeys = new WeakMap<object, KeyObject>();

/**
 * The JWS that jose's SignJWT makes of `payload` with an RS256 key (the header `{alg, kid}`, the
 * payload's own key order, undefined claims left out), signed by node:crypto's one-shot sign on
 * the thread pool, as jose's WebCrypto sign is, without WebCrypto's promise machinery per
 * call: the event loop spends about 0.1 ms on it instead of the signature's whole cost.
 * RSASSA-PKCS1-v1_5 is deterministic, so the token is the same bytes either way. Null for any
 * other algorithm (the jwt plugin signs those).
 */
function signedRs256(payload: Record<string, unknown>, key: { alg: string; kid: string; privateKey: unknown }): Promise<string> | null {
  if (key.alg !== "RS256" || !(key.privateKey instanceof CryptoKey)) return null;
  let keyObject = rsaKeys.get(key.privateKey);
  if (!keyObject) rsaKeys.set(key.privateKey, (keyObject = KeyObject.from(key.privateKey)));
  const input = `${Buffer.from(JSON.stringify({ alg: key.alg, kid: key.kid })).toString("base64url")}.${Buffer.from(JSON.stringify(payload)).toString("base64url")}`;
  return new Promise((resolve, reject) => {
    sign("sha256", Buffer.from(input), keyObject, (err, signature) => (err ? reject(err) : resolve(`${input}.${signature.toString("base64url")}`)));
  });
}

/** The form's token and requested scopes, when it holds only the common case's fields, each once. */
function formOf(body: string): { token: string; scopes: string[] | undefined } | null {
  const params = new URLSearchParams(body);
  const seen = new Set<string>();
  for (const [key] of params) {
    if (!FORM_FIELDS.has(key) || seen.has(key)) return null;
    seen.add(key);
  }
  const token = params.get("refresh_token");
  if (params.get("grant_type") !== "refresh_token" || !token) return null;
  const scope = params.get("scope");
  return { token, scopes: scope === null ? undefined : scope.split(" ") };
}

function clientQualifies(client: RefreshClientRow): boolean {
  return (
    !client.disabled &&
    !client.clientDiscoveryId &&
    (client.tokenEndpointAuthMethod ?? "client_secret_basic") === "client_secret_basic" &&
    Array.isArray(client.grantTypes) &&
    client.grantTypes.includes("refresh_token") &&
    client.scopes !== "invalid" &&
    !client.memberPubkey &&
    !client.dpopBoundAccessTokens &&
    client.metadata?.dpop_bound_access_tokens !== true &&
    client.subjectType !== "pairwise"
  );
}

/** The headers that take a request out of the common case (the generic path reads them). */
export interface RefreshHeaders {
  authorization?: string | null;
  dpop?: string | null;
  memberKeySignature?: string | null;
  cookie?: string | null;
  origin?: string | null;
}

export interface RefreshAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Answers the common case, or null for oauth-provider's endpoint to answer. */
export function refreshAnswerer({ store, context, issued, failed }: Omit<FastRefreshOptions, "path">) {
  let ready: { ctx: RefreshContext; provider: ProviderOptions; jwt: JwtOptions; ownIds: boolean } | null = null;
  void context.then((ctx) => {
    const provider = (ctx.getPlugin("oauth-provider") as { options?: ProviderOptions } | null)?.options;
    const jwt = (ctx.getPlugin("jwt") as { options?: JwtOptions } | null)?.options;
    // Time-ordered ids where better-auth makes its own random ones (lib/db/ids.ts); a
    // deployment's own generator otherwise.
    const advanced = ctx.options.advanced as { generateId?: unknown; database?: { generateId?: unknown } } | undefined;
    const ownIds = advanced?.generateId === undefined && advanced?.database?.generateId === undefined;
    if (provider && !unsupportedOption(provider, jwt)) ready = { ctx, provider, jwt: jwt ?? {}, ownIds };
  });

  /** The ID token's claims and key, and a function that starts its signature (on the thread pool for RS256). */
  async function idTokenSigner(
    { ctx, provider, jwt }: NonNullable<typeof ready>,
    grant: { client: RefreshClientRow; user: RefreshUserRow; sessionId: string | null; referenceId: string | null; authTime: Date | null; resources: unknown },
    scopes: string[],
    accessToken: string,
    iat: number,
  ): Promise<() => Promise<string>> {
    const shim = { context: ctx } as unknown as Parameters<typeof signJWT>[0];
    const key = await resolveSigningKey(shim, jwt as Parameters<typeof resolveSigningKey>[1]);
    if (!key) throw new Error("no signing key");
    const { client, user } = grant;
    // The payload oauth-provider's createIdToken builds, in its order. OpenID Connect's standard
    // claims are placeholders there, so no extension can add them. Written out, not spread from a
    // list: a spread's copy grown field by field took a new hidden class on every token (V8
    // migrated it each time).
    const payload: Record<string, unknown> = {
      name: undefined,
      picture: undefined,
      given_name: undefined,
      family_name: undefined,
      email: undefined,
      email_verified: undefined,
      auth_time: grant.authTime ? Math.floor(grant.authTime.getTime() / 1000) : undefined,
      acr: "0",
      at_hash: atHash(accessToken, key.alg),
      iss: jwt.jwt?.issuer ?? ctx.baseURL,
      sub: user.id,
      aud: client.clientId,
      nonce: undefined,
      iat,
      exp: iat + (provider.idTokenExpiresIn ?? 36_000),
      sid: client.enableEndSession || client.backchannelLogoutUri ? (grant.sessionId ?? undefined) : undefined,
    };
    // Its extensions' ID-token claims: the first contribution of a name wins, none replaces the provider's own.
    const extra: Record<string, unknown> = {};
    for (const extension of provider.extensions ?? []) {
      const claims = (await extension.claims?.idToken?.({
        ctx: shim,
        opts: provider,
        user,
        client,
        scopes,
        grantType: "refresh_token",
        referenceId: grant.referenceId ?? undefined,
        sessionId: grant.sessionId ?? undefined,
        resources: grant.resources ?? undefined,
        metadata: client.metadata ?? undefined,
      })) as Record<string, unknown> | undefined;
      for (const [name, value] of Object.entries(claims ?? {})) if (!(name in extra)) extra[name] = value;
    }
    for (const [name, value] of Object.entries(extra)) if (value !== undefined && !(name in payload)) payload[name] = value;
    return () => signedRs256(payload, key) ?? signJWT(shim, { options: jwt as Parameters<typeof signJWT>[1]["options"], payload, resolvedKey: key });
  }

  return async function answer(headers: RefreshHeaders, body: string): Promise<RefreshAnswer | null> {
    const setup = ready;
    if (!setup || !quiet(headers)) return null;
    const basic = plainBasic(headers.authorization);
    if (!basic) return null;
    const form = formOf(body);
    if (!form) return null;

    const found: RefreshGrant | null = await store.findGrant(basic.id, sha256(form.token));
    if (!found?.token || !found.user) return null;
    const { client, token: row, user } = found;
    if (!clientQualifies(client) || !secretMatches(client.clientSecret, basic.secret)) return null;
    const now = Date.now();
    if (row.clientId !== client.clientId || row.revoked || row.expiresAt.getTime() < now || row.confirmation != null || !row.scopes) return null;
    if (Array.isArray(row.resources) ? row.resources.length > 0 : row.resources != null) return null;
    if (!row.scopes.includes("offline_access")) return null;
    const scopes = form.scopes ?? row.scopes;
    const granted = new Set(row.scopes);
    const allowed = Array.isArray(client.scopes) ? new Set(client.scopes) : null;
    if (!scopes.every((scope) => granted.has(scope) && (!allowed || allowed.has(scope)))) return null;
    const claims = row.requestedUserInfoClaims;
    const requestedUserInfoClaims = Array.isArray(claims) && claims.every((c) => typeof c === "string") ? claims : [];
    if (claims != null && !Array.isArray(claims)) return null;

    const { ctx, provider, ownIds } = setup;
    const refreshId = ownIds ? timeOrderedId() : ctx.generateId({ model: "oauthRefreshToken" });
    const accessId = ownIds ? timeOrderedId() : ctx.generateId({ model: "oauthAccessToken" });
    if (typeof refreshId !== "string" || typeof accessId !== "string") return null;
    const iat = Math.floor(now / 1000);
    const exp = iat + (provider.accessTokenExpiresIn ?? 3600);
    // The characters oauth-provider's own tokens have (generateRandomString(32, "A-Z", "a-z")).
    const accessToken = randomString(32, TOKEN_ALPHABET);
    const refreshToken = randomString(32, TOKEN_ALPHABET);
    const signer = scopes.includes("openid")
      ? await idTokenSigner(setup, { client, user, sessionId: row.sessionId, referenceId: row.referenceId, authTime: row.authTime, resources: row.resources }, scopes, accessToken, iat)
      : undefined;
    // The signature (RSA, on the thread pool) is made while the rotation is written: the two
    // waits overlap instead of adding up. Everything that reads or can fail for want of data
    // (claims, key) is done above, before anything is written; what is left can fail only
    // with the key itself, after the rotation, and is then answered 503 below.
    const signing = signer?.();
    signing?.catch(() => {});

    let rotated: boolean;
    try {
      rotated = await store.rotate({
        previousId: row.id,
        issuedAt: new Date(iat * 1000),
        refresh: { id: refreshId, tokenHash: sha256(refreshToken), expiresAt: new Date((iat + (provider.refreshTokenExpiresIn ?? 2_592_000)) * 1000) },
        access: { id: accessId, tokenHash: sha256(accessToken), expiresAt: new Date(exp * 1000) },
        clientId: client.clientId,
        sessionId: row.sessionId,
        userId: row.userId,
        referenceId: row.referenceId,
        authorizationCodeId: row.authorizationCodeId,
        authTime: row.authTime,
        scopes,
        requestedUserInfoClaims,
      });
    } catch (err) {
      // Nothing committed (or the commit's fate is unknown): a 503 the client retries, as
      // lib/atomic-refresh.ts answers; the generic path would take the retry for reuse.
      failed(err);
      return { status: 503, headers: { "retry-after": String(UNAVAILABLE_RETRY_AFTER) }, body: "" };
    }
    // Used by another request meanwhile: oauth-provider answers (reuse: the family is revoked).
    if (!rotated) return null;
    let id_token: string | undefined;
    try {
      id_token = await signing;
    } catch (err) {
      // Rotated but unsigned: the pair cannot be handed out. The client's retry with the old
      // token is reuse and ends the grant (fail closed); a key that cannot sign fails every
      // ID token, generic path included.
      failed(new Error(`ID token not signed after the rotation: ${err instanceof Error ? err.message : String(err)}`));
      return { status: 503, headers: { "retry-after": String(UNAVAILABLE_RETRY_AFTER) }, body: "" };
    }
    issued(client.clientId);
    return {
      status: 200,
      headers: NO_STORE,
      body: JSON.stringify({
        access_token: accessToken,
        expires_in: exp - iat,
        expires_at: exp,
        token_type: "Bearer",
        refresh_token: refreshToken,
        scope: scopes.join(" "),
        id_token,
      }),
    };
  };
}

/**
 * The options of a fast refresh on this deployment's database, with the effects the generic
 * path's after-hooks have for an issued pair: the token counted by grant type (plugins/metrics,
 * and for its client in memory, plugins/analytics)
 * and the client's use recorded for the expiry of unused registrations
 * (plugins/registration-management; at most hourly per client and process, from its own
 * recorder here, so at most one more write an hour).
 */
export function fastRefreshOptions({ database, context, metrics, logger, analytics }: { database: DatabaseHandle; context: Promise<RefreshContext>; metrics: Metrics; logger: Logger; analytics?: AnalyticsCounter }): Omit<FastRefreshOptions, "path"> {
  const recordClientUse = clientUseRecorder(database.db);
  return {
    store: refreshGrantStore(database),
    context,
    issued(clientId) {
      metrics.tokensIssued.inc({ grant_type: "refresh_token" });
      analytics?.count(clientId, "token", "refresh_token");
      recordClientUse(clientId).catch((err) => logger.warn("client use not recorded", { err: err instanceof Error ? err.message : String(err) }));
    },
    failed(err) {
      logger.warn("refresh token rotation failed; answered 503", { err: err instanceof Error ? err.message : String(err) });
    },
  };
}

/**
 * No header that asks for more than the plain grant: a DPoP proof, a member-key signature, a
 * cookie or an Origin (the app's CORS and origin rules) sends the request to better-auth.
 */
const quiet = (h: { dpop?: unknown; memberKeySignature?: unknown; cookie?: unknown; origin?: unknown }): boolean =>
  !h.dpop && !h.memberKeySignature && !h.cookie && !h.origin;

const headerOf = (value: string | string[] | undefined): string | null => (Array.isArray(value) ? value.join(", ") : (value ?? null));

/** The fast refresh in the fast lane (lib/fast-lane.ts), counted against the client's budget. */
export function refreshLaneRoute(options: FastRefreshOptions): LaneRoute {
  const answer = refreshAnswerer(options);
  const route = clientLaneRoute(options.path, (req) => {
    const { authorization, dpop, cookie, origin } = req.headers;
    return answer({ authorization, dpop: headerOf(dpop), memberKeySignature: headerOf(req.headers["x-auth-token"]), cookie, origin }, req.body);
  });
  // The token endpoint serves every grant: only a refresh grant the lane could answer is
  // charged here, so that another grant (or a browser's request) goes to the app without a
  // charge taken and given back, two Redis round trips for nothing.
  const mayAnswer = (req: LaneRequest) =>
    REFRESH_GRANT.test(req.body) && quiet({ dpop: req.headers.dpop, memberKeySignature: req.headers["x-auth-token"], cookie: req.headers.cookie, origin: req.headers.origin });
  return { ...route, credential: (req) => (mayAnswer(req) ? clientBudget(req) : null) };
}

/** A form that asks for the refresh grant (formOf makes the exact check). */
const REFRESH_GRANT = /(?:^|&)grant_type=refresh_token(?:&|$)/;

/** better-auth's handler with the common case answered in front of it (for requests that reach the app: an AUTH_URL with a path). */
export function withFastRefresh(next: EdgeHandler, options: Omit<FastRefreshOptions, "path">): EdgeHandler {
  const answer = refreshAnswerer(options);
  return async function fastRefreshHandler(req, edge) {
    if (req.method !== "POST" || edge.path !== AUTH_PATHS.token || edge.grantType !== "refresh_token" || !edge.form) return next(req, edge);
    const h = req.headers;
    const fast = await answer(
      { authorization: h.get("authorization"), dpop: h.get("dpop"), memberKeySignature: h.get("x-auth-token"), cookie: h.get("cookie"), origin: h.get("origin") },
      edge.form.raw,
    );
    return fast ? new Response(fast.body || null, { status: fast.status, headers: fast.headers }) : next(req, edge);
  };
}
