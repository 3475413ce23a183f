import type { AccessTokenRow, ClientCredentialRow, OAuthTokenStore } from "../oauth-store/introspection.js";
import { thenOrNow, type Awaitable } from "../../lib/db/connection.js";
import { AUTH_PATHS } from "../../lib/auth-endpoints.js";
import type { EdgeHandler } from "../../lib/auth-request.js";
import { clientLaneRoute, NO_STORE, plainBasic, secretMatches, sha256 } from "./client-credentials.js";
import type { LaneRoute } from "../../lib/fast-lane.js";

/**
 * RFC 7662 introspection of an opaque access token by the client it was issued to, answered
 * from one prepared lookup instead of better-auth's endpoint pipeline (its router, hooks,
 * body schema, then a client read, a token read, a session read and a user read one by one).
 *
 * It answers only the common case, and only with `active: true`; anything else, including
 * every inactive or refused outcome, goes to @better-auth/oauth-provider's own endpoint
 * (`next`), so errors, audit and edge cases stay exactly its own. The common case is:
 *   1. RFC 6749 §2.3.1 Basic credentials of plain unreserved characters (so form-decoding
 *      them is the identity), and a form of only `token` and `token_type_hint`;
 *   2. the client is registered here (no metadata document), not disabled, registered for
 *      client_secret_basic, and the secret's SHA-256 matches the stored hash in constant
 *      time (oauth-provider's `storeClientSecret: "hashed"`);
 *   3. `token_type_hint` absent or `access_token`, and the token is not JWS-shaped;
 *   4. the token's SHA-256 (`storeTokens: "hashed"`) names a row issued to that same client,
 *      not expired, not revoked, with no RFC 8707 resources and no DPoP/mTLS confirmation,
 *      whose session, if it has one, still exists and has not expired.
 * The answer's fields, their order and its headers are those oauth-provider's
 * validateOpaqueAccessToken gives for such a token (tests/oauth/fast-introspection.test.ts compares
 * them). Nothing is cached: each answer reads the rows, so a revocation holds at once on every
 * instance.
 */
export interface FastIntrospectionOptions {
  store: OAuthTokenStore;
  /** The `iss` of the answer (the jwt plugin's issuer, AUTH_URL). */
  issuer: string;
  /** The endpoint's public path (BASE_PATH + /oauth2/introspect). */
  path: string;
  /** oauth-provider's customAccessTokenClaims (auth.config.ts), applied as it applies them. */
  claims: (input: { scopes: string[]; referenceId?: string }) => Awaitable<Record<string, unknown>>;
}


/** The form's token when it holds only `token` (once) and an access-token hint at most. */
function tokenOf(form: string): string | null {
  const params = new URLSearchParams(form);
  let token: string | null = null;
  for (const [key, value] of params) {
    if (key === "token" && token === null) token = value;
    else if (key === "token_type_hint" && value === "access_token" && params.getAll(key).length === 1) continue;
    else return null;
  }
  return token && token.split(".").length !== 3 ? token : null;
}

/** Answers the common case's body (JSON text), or null for oauth-provider's endpoint to answer; at once on SQLite. */
export function introspectionAnswerer({ store, issuer, claims }: Omit<FastIntrospectionOptions, "path">) {
  function active(client: ClientCredentialRow, row: AccessTokenRow | null, secret: string): Awaitable<string | null> {
    if (client.disabled || client.clientDiscoveryId || (client.tokenEndpointAuthMethod ?? "client_secret_basic") !== "client_secret_basic") return null;
    if (!secretMatches(client.clientSecret, secret)) return null;
    if (!row || row.clientId !== client.clientId || !row.scopes || row.revoked || row.confirmation != null) return null;
    if (Array.isArray(row.resources) ? row.resources.length > 0 : row.resources != null) return null;
    const now = Date.now();
    if (row.expiresAt.getTime() < now) return null;
    if (row.sessionId && (!row.session || row.session.expiresAt.getTime() < now)) return null;
    // Pairwise subjects need oauth-provider's pairwise secret: its path computes them.
    if (client.subjectType === "pairwise") return null;
    const scopes = row.scopes;
    return thenOrNow(claims({ scopes, referenceId: row.referenceId ?? undefined }), (extra) => {
      const own = {
        active: true,
        iss: issuer,
        client_id: row.clientId,
        azp: row.clientId,
        sub: row.userId ?? undefined,
        sid: row.sessionId ?? undefined,
        exp: Math.floor(row.expiresAt.getTime() / 1000),
        iat: Math.floor(row.createdAt.getTime() / 1000),
        scope: scopes.join(" "),
        token_type: "Bearer",
      };
      // The extra claims first, as the generic answer orders them; without any (the common
      // case), the literal alone: a spread copy grown field by field took a new hidden class
      // on every answer in V8.
      return JSON.stringify(Object.keys(extra).length === 0 ? own : { ...extra, ...own });
    });
  }

  return function answer(authorization: string | null | undefined, form: string): Awaitable<string | null> {
    const credentials = plainBasic(authorization);
    const token = credentials ? tokenOf(form) : null;
    if (!credentials || !token) return null;
    return thenOrNow(store.findClientAndToken(credentials.id, sha256(token)), (found) => (found ? active(found.client, found.token, credentials.secret) : null));
  };
}

/** better-auth's handler with the common case answered in front of it (for requests that reach the app). */
export function withFastIntrospection(next: EdgeHandler, options: Omit<FastIntrospectionOptions, "path">): EdgeHandler {
  const answer = introspectionAnswerer(options);
  return async function fastIntrospectionHandler(req, edge) {
    if (req.method !== "POST" || edge.path !== AUTH_PATHS.introspect || !edge.form) return next(req, edge);
    const body = await answer(req.headers.get("authorization"), edge.form.raw);
    return body === null ? next(req, edge) : new Response(body, { status: 200, headers: NO_STORE });
  };
}

/** The same answers in the fast lane (lib/fast-lane.ts), counted against the client's budget. */
export function introspectionLaneRoute(options: FastIntrospectionOptions): LaneRoute {
  const answer = introspectionAnswerer(options);
  return clientLaneRoute(options.path, (req) => thenOrNow(answer(req.headers.authorization, req.body), (body) => (body === null ? null : { status: 200, headers: NO_STORE, body })));
}
