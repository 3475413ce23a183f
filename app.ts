import { randomUUID } from "node:crypto";
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { Redis } from "ioredis";
import type { Kysely } from "kysely";
import { BASE_PATH, type Auth } from "./auth.config.js";
import { memoryReplayCache, redisReplayCache } from "./lib/bitcoin-auth.js";
import type { Config } from "./lib/env.js";
import { OAuthError, problems } from "./lib/errors.js";
import type { Logger } from "./lib/logger.js";
import { asOAuthError, oauthErrorResponse, problemResponse, renderError } from "./lib/respond.js";
import { memoryWindowLimiter, redisWindowLimiter } from "./lib/rate-limit.js";
import { signInProviders } from "./lib/social-providers.js";
import { agentRoutes } from "./routes/agents.js";
import { authorizedAppsRoutes } from "./routes/authorized-apps.js";
import { jwksRoute } from "./routes/jwks.js";
import { backupRoutes } from "./routes/backup.js";
import { pageRoutes } from "./routes/pages/index.js";
import { profileRoutes } from "./routes/profile.js";
import { wellKnownRoutes } from "./routes/well-known.js";
import { hasNulInForm, hasNulInJson, NUL_REFUSED, RAW_FORM_BODY } from "./lib/validate.js";

export interface AppDeps {
  auth: Auth;
  db: Kysely<any>;
  logger: Logger;
  authUrl: string;
  config: Config;
  redis?: Redis;
}

/** Largest body any /api route reads; past it a 413 problem, never a hang. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** Protocol endpoints whose errors are RFC 6749 objects (the rest of /api/auth is better-auth's surface). */
const OAUTH_PROTOCOL_PATHS = new Set(
  ["/oauth2/token", "/oauth2/introspect", "/oauth2/revoke", "/oauth2/register", "/oauth2/userinfo", "/device/code"].map((p) => BASE_PATH + p),
);

export function createApp({ auth, db, logger, authUrl, config, redis }: AppDeps) {
  const app = new Hono();
  const tooLarge = () => problemResponse(problems.tooLarge());

  app.use(async (c, next) => {
    c.set("requestId" as never, (c.req.header("x-request-id")?.slice(0, 64) || randomUUID()) as never);
    await next();
  });
  // NUL characters in the path, the query string or Basic credentials (bodies: readJson, withBufferedBody).
  app.use(async (c, next) => {
    if (hasNulInForm(c.req.url) || hasNulInBasic(c.req.header("authorization"))) return nulRefused(c.req.path);
    await next();
  });

  app.route("/.well-known", wellKnownRoutes(auth, authUrl));
  // Before the body limit: a GET of a cached document (routes/jwks.ts).
  app.get(`${BASE_PATH}/jwks`, jwksRoute(auth));

  const authBodyLimit = bodyLimit({ maxSize: MAX_BODY_BYTES, onError: tooLarge });
  app.use(`${BASE_PATH}/*`, (c, next) => {
    if (hasNoBody(c.req.raw)) return next();
    const length = declaredLength(c.req.raw);
    if (length === undefined) return authBodyLimit(c, next);
    return length > MAX_BODY_BYTES ? Promise.resolve(tooLarge()) : next();
  });
  app.route("/api/authorized-apps", authorizedAppsRoutes({ auth, db }));
  app.route("/api/agents", agentRoutes({ auth, db, dbType: config.database.kind, authUrl }));
  // Before the 64 KiB limit below: backups carry their own (BACKUP_MAX_BYTES).
  const syncLimit = { max: 20, windowMs: 60_000 }; // spec, Limits: 20 requests per minute per IP
  app.route(
    "/api/backup",
    backupRoutes({
      auth,
      db,
      replay: redis ? redisReplayCache(redis, "idp:backup-auth:") : memoryReplayCache(),
      syncLimiter: !config.rateLimitEnabled ? null : redis ? redisWindowLimiter(redis, syncLimit, "idp:backup-sync:") : memoryWindowLimiter(syncLimit),
      maxBackupBytes: config.backupMaxBytes,
    }),
  );
  const profiles = profileRoutes({
    auth,
    database: { db, type: config.database.kind },
    replay: redis ? redisReplayCache(redis, "idp:profile-auth:") : memoryReplayCache(),
  });
  app.use("/api/user/*", bodyLimit({ maxSize: 64 * 1024, onError: tooLarge }));
  app.use("/api/bap/*", bodyLimit({ maxSize: 64 * 1024, onError: tooLarge }));
  app.route("/api/user", profiles.users);
  app.route("/api/bap", profiles.bap);
  app.all(`${BASE_PATH}/*`, async (c) => {
    const req = await withBufferedBody(c.req.raw);
    if (!req) return nulRefused(c.req.path);
    const res = await auth.handler(req);
    // RFC 6585 §4 names the header Retry-After; better-auth's limiter sends X-Retry-After only.
    if (res.status === 429 && !res.headers.has("retry-after")) res.headers.set("retry-after", res.headers.get("x-retry-after") ?? "60");
    return OAUTH_PROTOCOL_PATHS.has(c.req.path) ? asOAuthError(res, c.req.path) : res;
  });

  app.use("/*", bodyLimit({ maxSize: 64 * 1024, onError: tooLarge }));
  // The pages answer / too: the account page for a signed-in person, else /sign-in.
  app.route("/", pageRoutes({ auth, db, authUrl, sigmaServiceName: config.sigmaServiceName, logger, socialProviders: signInProviders(config.social), dbType: config.database.kind }));

  app.notFound((c) => problemResponse(problems.notFound(), c.req.path));
  app.onError(renderError(logger));
  return app;
}

/** GET and HEAD requests that announce no body (no Content-Length, not chunked). */
function hasNoBody(req: Request): boolean {
  return (req.method === "GET" || req.method === "HEAD") && !req.headers.has("content-length") && !req.headers.has("transfer-encoding");
}

/** The Content-Length of a request that declares one (and is not chunked), else undefined. */
function declaredLength(req: Request): number | undefined {
  const length = req.headers.get("content-length");
  if (length === null || req.headers.has("transfer-encoding")) return undefined;
  return parseInt(length, 10) || 0;
}

/**
 * better-auth reads a request body through web streams: the adapter turns the socket into
 * a ReadableStream, endpoints that re-read the body tee it, and each reader drains a copy.
 * A body whose length is declared (and already checked against the limit) is read once
 * straight from the socket instead, and better-auth gets a Request over those bytes.
 */
async function withBufferedBody(req: Request): Promise<Request | null> {
  // A GET or HEAD without a body: a Request of its own, without the adapter's per-request
  // AbortController and socket-backed body plumbing (nothing here aborts on disconnect).
  if (hasNoBody(req)) return new Request(req.url, { method: req.method, headers: req.headers });
  // A declared empty body passes as it is; a chunked one was already read (and limited) by
  // the body-limit middleware, and is read here again from that buffer.
  if (req.method === "GET" || req.method === "HEAD" || declaredLength(req) === 0) return req;
  const body = await req.arrayBuffer();
  const buffered = new Request(req.url, { method: req.method, headers: req.headers, body });
  const type = req.headers.get("content-type")?.toLowerCase() ?? "";
  const text = utf8.decode(body);
  // null: the body carries a NUL character (lib/validate.ts), refused by the caller.
  if (type.includes("application/x-www-form-urlencoded")) {
    if (hasNulInForm(text)) return null;
    // Endpoints that read a form twice (OAuth client authentication re-parses the raw form)
    // take this text instead of teeing the body (patches/better-call+1.4.5.patch).
    Object.defineProperty(buffered, RAW_FORM_BODY, { value: text });
  } else if (hasNulInJson(text)) return null;
  return buffered;
}

const utf8 = new TextDecoder();

/** Basic credentials (RFC 6749 §2.3.1: form-encoded inside base64) that decode to a NUL. */
function hasNulInBasic(authorization: string | undefined): boolean {
  if (!authorization || !/^basic /i.test(authorization)) return false;
  return hasNulInForm(Buffer.from(authorization.slice(6).trim(), "base64").toString("latin1"));
}

/** 400 in the family of the route: RFC 6749 on the OAuth endpoints, problem details elsewhere. */
function nulRefused(path: string): Response {
  if (OAUTH_PROTOCOL_PATHS.has(path)) return oauthErrorResponse(new OAuthError("invalid_request", NUL_REFUSED));
  return problemResponse(problems.badRequest(NUL_REFUSED), path);
}
