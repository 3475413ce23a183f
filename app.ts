import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { requestId } from "hono/request-id";
import type { Kysely } from "kysely";
import type { Auth } from "./auth.config.js";
import type { Collaborators } from "./collaborators.js";
import { BASE_PATH } from "./lib/transport.js";
import { errorFamilyOf, oauthRouteOf } from "./lib/error-families.js";
import type { Config } from "./lib/env.js";
import { OAuthError, problems } from "./lib/errors.js";
import type { Logger } from "./lib/logger.js";
import { asOAuthError, oauthErrorResponse, problemResponse, renderError } from "./lib/respond.js";
import { windowLimiter, type WindowOptions } from "./lib/rate-limit.js";
import { strictTransportSecurity } from "./lib/strict-transport.js";
import { signInProviders } from "./lib/social-providers.js";
import { agentRoutes } from "./routes/agents.js";
import { authorizedAppsRoutes } from "./routes/authorized-apps.js";
import { jwksDocument, jwksRoutes } from "./routes/jwks.js";
import { backupRoutes } from "./routes/backup.js";
import { pageRoutes } from "./routes/pages/index.js";
import { subscriptionRoutes, subscriptionStatusRoute, type SubscriptionDeps } from "./routes/subscription.js";
import type { ProfileDeps } from "./routes/profile.js";
import { userBapIdRoutes } from "./routes/user-bap-ids.js";
import { bapProfileRoutes } from "./routes/bap-profile.js";
import { walletRoutes } from "./routes/wallet.js";
import { wellKnownRoutes } from "./routes/well-known.js";
import { withDeps, type AppEnv } from "./routes/middleware.js";
import { isNetworkPathReference } from "./lib/redirect-target.js";
import { hasNulInForm, hasNulInJson, jsonTooDeep, NUL_REFUSED, RAW_FORM_BODY, TOO_DEEP_REFUSED } from "./lib/validate.js";

export interface AppDeps {
  auth: Auth;
  db: Kysely<any>;
  logger: Logger;
  authUrl: string;
  config: Config;
  /** Built once in server.ts and shared with better-auth's plugins (collaborators.ts). */
  shared: Collaborators;
  /** Paid tiers (server.ts builds them: the tier service, the Stripe client, the mint worker's wake-up). */
  subscriptions: Pick<SubscriptionDeps, "tiers" | "stripe" | "mintWaitReason" | "onMintQueued">;
}

/** Largest body any /api route reads; past it a 413 problem, never a hang. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** Writes to /api/user/* and /api/bap/* per signed-in user per minute. */
export const PROFILE_WRITE_LIMIT: WindowOptions = { max: 60, windowMs: 60_000 };

export function createApp({ auth, db, logger, authUrl, config, shared, subscriptions }: AppDeps) {
  const app = new Hono<AppEnv>();
  if (authUrl.startsWith("https://")) app.use(strictTransportSecurity());
  const tooLarge = () => problemResponse(problems.tooLarge());

  // A caller's X-Request-Id is kept when it is short and plain (letters, digits, -, _, =), else a
  // new one; it names the request in the log and in a 500's detail.
  // Hono's middleware puts it only on answers built through the context (c.json, c.html); set
  // after the handler, it is on every answer, problems and better-auth's included.
  app.use(requestId({ limitLength: 64, headerName: "X-Request-Id" }), async (c, next) => {
    await next();
    c.res.headers.set("x-request-id", c.var.requestId);
  });
  // Defence in depth for CWE-601 (lib/redirect-target.ts): whatever route or dependency built it,
  // no response of ours sends the browser to a network-path reference (`//host`, `/\host`).
  app.use(async (c, next) => {
    await next();
    const location = c.res.headers.get("location");
    if (!location || !isNetworkPathReference(location)) return;
    logger.warn("protocol-relative Location refused", { path: c.req.path, requestId: c.var.requestId });
    const headers = new Headers(c.res.headers);
    headers.set("location", "/error?error=invalid_request");
    headers.delete("content-length");
    const refused = new Response(null, { status: c.res.status, headers });
    c.res = undefined; // Hono merges the old headers (the bad Location) into an assigned response unless cleared first.
    c.res = refused;
  });
  // NUL characters in the path, the query string or Basic credentials (bodies: readJson, withBufferedBody).
  app.use(async (c, next) => {
    if (hasNulInForm(c.req.url) || hasNulInBasic(c.req.header("authorization"))) return refused(c.req.path, NUL_REFUSED);
    await next();
  });

  app.route("/.well-known", withDeps(wellKnownRoutes, { auth, issuer: authUrl, documents: new Map() }));
  // Before the body limit: a GET of a cached document (routes/jwks.ts).
  app.route(`${BASE_PATH}/jwks`, withDeps(jwksRoutes, { auth, document: jwksDocument(auth, shared.jwks) }));

  const subscriptionDeps: SubscriptionDeps = { db, logger, authUrl, settings: config.stripe, ...subscriptions };
  // The published Sigma client (@sigma-auth/better-auth-plugin) asks under {base_url}: one handler, two mounts.
  app.route(`${BASE_PATH}/subscription/status`, subscriptionStatusRoute(auth, subscriptionDeps));
  // Before the 64 KiB limit below: the webhook reads up to its own limit.
  app.route("/api/subscription", subscriptionRoutes(auth, subscriptionDeps));

  const authBodyLimit = bodyLimit({ maxSize: MAX_BODY_BYTES, onError: tooLarge });
  app.use(`${BASE_PATH}/*`, (c, next) => {
    if (hasNoBody(c.req.raw)) return next();
    const length = declaredLength(c.req.raw);
    if (length === undefined) return authBodyLimit(c, next);
    return length > MAX_BODY_BYTES ? Promise.resolve(tooLarge()) : next();
  });
  app.route("/api/authorized-apps", withDeps(authorizedAppsRoutes, { auth, db }));
  app.route("/api/agents", withDeps(agentRoutes, { auth, db, authUrl }));
  const { limits, bitcoinAuth } = shared;
  // Before the 64 KiB limit below: backups carry their own (BACKUP_MAX_BYTES).
  const syncLimit = { max: 20, windowMs: 60_000 }; // spec, Limits: 20 requests per minute per IP
  app.route(
    "/api/backup",
    withDeps(backupRoutes, {
      auth,
      db,
      bitcoinAuth: bitcoinAuth.backup,
      syncLimiter: windowLimiter(limits, syncLimit, "idp:backup-sync:"),
      signedReadLimiter: windowLimiter(limits, syncLimit, "idp:backup-signed-read:"),
      maxBackupBytes: config.backupMaxBytes,
    }),
  );
  const profiles: ProfileDeps = {
    auth,
    db,
    bitcoinAuth: bitcoinAuth.profile,
    writeLimiter: windowLimiter(limits, PROFILE_WRITE_LIMIT, "idp:profile-write:"),
  };
  app.use("/api/user/*", bodyLimit({ maxSize: 64 * 1024, onError: tooLarge }));
  app.use("/api/bap/*", bodyLimit({ maxSize: 64 * 1024, onError: tooLarge }));
  app.route("/api/user", withDeps(userBapIdRoutes, profiles));
  app.route("/api/bap", withDeps(bapProfileRoutes, profiles));
  // One implementation, two mounts: the spec's /api/wallet, and the auth base path where the
  // published Sigma client calls it (before the better-auth catch-all below).
  const wallets = walletRoutes({ auth, db, authUrl, bitcoinAuth: bitcoinAuth.wallet, indexer: shared.ordinals, secret: config.secret });
  app.route("/api/wallet", wallets);
  app.route(`${BASE_PATH}/wallet`, wallets);
  app.all(`${BASE_PATH}/*`, async (c) => {
    const req = await withBufferedBody(c.req.raw);
    if (typeof req === "string") return refused(c.req.path, req);
    const res = await auth.handler(req);
    // RFC 6585 §4 names the header Retry-After; better-auth's limiter sends X-Retry-After only.
    if (res.status === 429 && !res.headers.has("retry-after")) res.headers.set("retry-after", res.headers.get("x-retry-after") ?? "60");
    // The OAuth endpoints speak RFC 6749 even where better-auth's router answered for them (lib/error-families.ts).
    const oauthRoute = oauthRouteOf(c.req.path);
    return oauthRoute ? asOAuthError(res, oauthRoute) : res;
  });

  app.use("/*", bodyLimit({ maxSize: 64 * 1024, onError: tooLarge }));
  // The pages answer / too: the account page for a signed-in person, else /sign-in.
  const billing = { tiers: subscriptions.tiers, stripe: subscriptions.stripe, stripeSettings: config.stripe, indexer: shared.ordinals };
  app.route("/", pageRoutes({ auth, db, authUrl, sigmaServiceName: config.sigmaServiceName, logger, socialProviders: signInProviders(config.social), billing }));

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
async function withBufferedBody(req: Request): Promise<Request | string> {
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
  // A string: why the body is refused (lib/validate.ts: a NUL character, JSON nested too deeply).
  if (type.includes("application/x-www-form-urlencoded")) {
    if (hasNulInForm(text)) return NUL_REFUSED;
    // Endpoints that read a form twice (OAuth client authentication re-parses the raw form)
    // take this text instead of teeing the body (patches/better-call+1.4.5.patch).
    Object.defineProperty(buffered, RAW_FORM_BODY, { value: text });
  } else if (hasNulInJson(text)) return NUL_REFUSED;
  else if (jsonTooDeep(text)) return TOO_DEEP_REFUSED;
  return buffered;
}

const utf8 = new TextDecoder();

/** Basic credentials (RFC 6749 §2.3.1: form-encoded inside base64) that decode to a NUL. */
function hasNulInBasic(authorization: string | undefined): boolean {
  if (!authorization || !/^basic /i.test(authorization)) return false;
  return hasNulInForm(Buffer.from(authorization.slice(6).trim(), "base64").toString("latin1"));
}

/** 400 in the family of the route: RFC 6749 on the OAuth endpoints, problem details elsewhere. */
function refused(path: string, detail: string): Response {
  if (errorFamilyOf(path) === "rfc6749") return oauthErrorResponse(new OAuthError("invalid_request", detail));
  return problemResponse(problems.badRequest(detail), path);
}
