import type { Hono } from "hono";
import type { Redis } from "ioredis";
import type { Auth } from "../auth.config.js";
import type { Config } from "../lib/env.js";
import { getSessionLaneRoute } from "../plugins/fast-lane/get-session.js";
import type { LaneAnswer, LaneRoute } from "../lib/fast-lane.js";
import { introspectionLaneRoute } from "../plugins/fast-lane/introspect.js";
import { fastRefreshOptions, refreshLaneRoute } from "../plugins/fast-lane/refresh.js";
import type { Metrics } from "../lib/metrics.js";
import type { AnalyticsCounter } from "../plugins/analytics/counter.js";
import type { Logger } from "../lib/logger.js";
import { oauthTokenStore } from "../plugins/oauth-store/introspection.js";
import { BASE_PATH } from "../lib/mount-paths.js";
import { accessTokenClaims, userInfoProfileClaims } from "../auth.config.js";
import { userInfoLaneRoute } from "../plugins/fast-lane/userinfo.js";
import { userInfoTokenStore } from "../plugins/oauth-store/userinfo.js";
import { selectedIdentityReader } from "../plugins/bap-identity/store.js";
import { AUTH_PATHS } from "../lib/auth-endpoints.js";
import { thenOrNow, type DatabaseHandle } from "../lib/db/connection.js";

/**
 * The routes of the fast lane (lib/fast-lane.ts): discovery and JWKS (public documents the
 * app already keeps in memory), get-session with a session cookie (plugins/fast-lane/get-session.ts),
 * the common introspection (plugins/fast-lane/introspect.ts), the common refresh grant
 * (plugins/fast-lane/refresh.ts) and the common userinfo (plugins/fast-lane/userinfo.ts).
 */
export interface FastLaneDeps {
  auth: Auth;
  /** The Hono app: discovery is its own answer, taken once (it depends on configuration only). */
  app: Hono<any>;
  config: Config;
  database: DatabaseHandle;
  /** The JWKS document the app serves too (routes/jwks.ts jwksDocument). */
  jwks: () => string | Promise<string>;
  metrics: Metrics;
  logger: Logger;
  /** Per-client analytics (plugins/analytics): the fast refresh counts its tokens there too. */
  analytics?: AnalyticsCounter;
  /** The Redis of better-auth's secondary storage, when the deployment has one: get-session reads its copies there. */
  redis?: Redis;
}

export function fastLaneRoutes({ auth, app, config, database, jwks, metrics, logger, analytics, redis }: FastLaneDeps): LaneRoute[] {
  return [documentLaneRoute(app, "/.well-known/openid-configuration"), jwksRoute(jwks), getSessionLaneRoute({ context: auth.$context, path: `${BASE_PATH}${AUTH_PATHS.getSession}`, database, redis }), introspectionLaneRoute({
    store: oauthTokenStore(database),
    issuer: config.authUrl,
    path: `${BASE_PATH}${AUTH_PATHS.introspect}`,
    claims: accessTokenClaims,
  }), refreshLaneRoute({
    ...fastRefreshOptions({ database, context: auth.$context, metrics, logger, analytics }),
    path: `${BASE_PATH}${AUTH_PATHS.token}`,
  }), userInfoLaneRoute({
    store: userInfoTokenStore(database),
    path: `${BASE_PATH}${AUTH_PATHS.userinfo}`,
    accessTokenClaims,
    userInfoClaims: userInfoProfileClaims(selectedIdentityReader(database)),
  })];
}

/**
 * A document the app answers the same to everyone (routes/well-known.ts): its first 200, kept
 * (at once once it is). Until then the app is asked again at the next request, after a refusal
 * or a failure as well.
 */
export function documentLaneRoute(app: Hono<any>, path: string): LaneRoute {
  /** The kept answer, or the app's answer on its way. */
  let kept: LaneAnswer | Promise<LaneAnswer | null> | undefined;
  const take = async (): Promise<LaneAnswer | null> => {
    const res = await app.request(path);
    if (res.status !== 200) return null;
    const headers: Record<string, string> = {};
    for (const name of ["content-type", "cache-control", "access-control-allow-origin"]) {
      const value = res.headers.get(name);
      if (value !== null) headers[name] = value;
    }
    return { status: 200, headers, body: await res.text() };
  };
  return {
    method: "GET",
    path,
    label: path,
    answer() {
      if (kept === undefined) {
        const taking = take();
        kept = taking;
        taking.then(
          (answer) => void (kept = answer ?? undefined),
          () => void (kept = undefined),
        );
      }
      return kept;
    },
  };
}

const JSON_TYPE = { "content-type": "application/json" };

/** GET /api/auth/jwks from the document routes/jwks.ts serves (rebuilt when the key set changes); at once while it is current. */
function jwksRoute(body: () => string | Promise<string>): LaneRoute {
  const answerOf = (text: string): LaneAnswer => ({ status: 200, headers: JSON_TYPE, body: text });
  return {
    method: "GET",
    path: `${BASE_PATH}/jwks`,
    label: `${BASE_PATH}/jwks`,
    answer() {
      return thenOrNow(body(), answerOf);
    },
  };
}
