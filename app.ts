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
import { requestContext, type Logger } from "./lib/logger.js";
import { asOAuthError, betterAuthErrorResponse, oauthErrorResponse, problemResponse, renderError } from "./lib/respond.js";
import { strictTransportSecurity } from "./lib/strict-transport.js";
import { signInProviders } from "./lib/social-providers.js";
import { agentRoutes } from "./routes/agents.js";
import { authorizedAppsRoutes } from "./routes/authorized-apps.js";
import { adminAuditLogRoutes } from "./routes/admin-audit-log.js";
import { jwksDocument, jwksRoutes } from "./routes/jwks.js";
import { backupRoutes } from "./routes/backup.js";
import { pageRoutes } from "./routes/pages/index.js";
import { subscriptionRoutes, subscriptionStatusRoutes, type SubscriptionDeps } from "./routes/subscription.js";
import type { ProfileDeps } from "./routes/profile.js";
import { userBapIdRoutes } from "./routes/user-bap-ids.js";
import { bapProfileRoutes } from "./routes/bap-profile.js";
import { walletRoutes } from "./routes/wallet.js";
import { domainVerificationRoutes } from "./routes/domain-verifications.js";
import { domainChecks } from "./plugins/domain-verification/checks.js";
import { createSafeFetch } from "./lib/safe-fetch.js";
import { wellKnownRoutes } from "./routes/well-known.js";
import { healthRoutes, type HealthDeps } from "./routes/health.js";
import { certificateTypeRoutes } from "./routes/certificate-types.js";
import { llmsTxtRoutes } from "./routes/llms-txt.js";
import { DEPRECATED_ROUTES, deprecationNotices, type DeprecatedRoute } from "./lib/deprecations.js";
import { apiReferenceRoutes, openapiDocumentRoutes } from "./openapi/routes.js";
import { certificateRoutes } from "./routes/certificates.js";
import { mutualAuthRoutes } from "./routes/mutual-auth.js";
import { walletBindingRoutes } from "./routes/wallet-binding.js";
import { issuableTypes, type CertificateTypeIds } from "./plugins/certificates/issuance.js";
import type { RevocationChain } from "./plugins/certificates/revocation.js";
import { MCP_PATH, MUTUAL_AUTH_PATH } from "./lib/transport.js";
import { metricsRoutes } from "./routes/metrics.js";
import { endpointRoute, markUnmatched, requestMetrics } from "./lib/request-metrics.js";
import { mcpResource, mcpRoutes } from "./routes/mcp.js";
import { resourceTokenVerifier } from "./lib/resource-token.js";
import { withDeps, type AppEnv } from "./routes/middleware.js";
import { ACCOUNT_RESPONSE_ERROR_CODES } from "./plugins/account-responses/error-codes.js";
import { isNetworkPathReference } from "./lib/redirect-target.js";
import { hasNulInForm, NUL_REFUSED, RAW_FORM_BODY } from "./lib/validate.js";
import { issuerPath } from "./lib/path-prefix.js";
import { declaredLength, hasNoBody, hasNulInBasic, withBufferedBody } from "./lib/request-body.js";
import type { Database } from "./lib/db/tables.js";

export interface AppDeps {
  auth: Auth;
  db: Kysely<Database>;
  logger: Logger;
  authUrl: string;
  config: Config;
  /** Built once in server.ts and shared with better-auth's plugins (collaborators.ts). */
  shared: Collaborators;
  /** What /readyz checks (lib/readiness.ts; server.ts builds it over the database and Redis). */
  readiness: HealthDeps["readiness"];
  /** Paid tiers (server.ts builds them: the tier service, the Stripe client, the mint worker's wake-up). */
  subscriptions: Pick<SubscriptionDeps, "tiers" | "stripe" | "mintWaitReason" | "onMintQueued">;
  /** Routes on their way out (lib/deprecations.ts). @default DEPRECATED_ROUTES */
  deprecations?: readonly DeprecatedRoute[];
  /** Certificates (server.ts): the revocation broadcaster, and the catalog's type IDs of what we attest. */
  certificates: { chain: RevocationChain; typeIds: CertificateTypeIds };
  /** The JWKS document (routes/jwks.ts), shared with the fast lane so one cache builds it. @default jwksDocument(auth, shared.jwks) */
  jwks?: () => Promise<string>;
}

/** Largest body any /api route reads; past it a 413 problem, never a hang. */
export const MAX_BODY_BYTES = 1024 * 1024;

export function createApp({ auth, db, logger, authUrl, config, shared, subscriptions, readiness, deprecations = DEPRECATED_ROUTES, certificates, jwks = jwksDocument(auth, shared.jwks) }: AppDeps) {
  const app = new Hono<AppEnv>();
  // First, to count and time every final answer; better-auth's catch-all is labelled by endpoint.
  const authEndpoint = endpointRoute(BASE_PATH, Object.values(auth.api).map((endpoint) => (endpoint as { path?: string }).path ?? ""));
  app.use(requestMetrics(shared.metrics, (route, path) => (route === `${BASE_PATH}/*` ? authEndpoint(path) : route)));
  if (authUrl.startsWith("https://")) app.use(strictTransportSecurity());
  const tooLarge = () => problemResponse(problems.tooLarge());

  // A caller's X-Request-Id is kept when it is short and plain (letters, digits, -, _, =), else a
  // new one; it names the request in the log and in a 500's detail.
  // Hono's middleware puts it only on answers built through the context (c.json, c.html); set
  // after the handler, it is on every answer, problems and better-auth's included.
  app.use(requestId({ limitLength: 64, headerName: "X-Request-Id" }), async (c, next) => {
    // Every log line written while this request is handled names it (lib/logger.ts).
    await requestContext.run({ requestId: c.var.requestId }, next);
    c.res.headers.set("x-request-id", c.var.requestId);
  });
  // RFC 9745 Deprecation / RFC 8594 Sunset on every answer of a listed route (lib/deprecations.ts).
  app.use(deprecationNotices(deprecations, authUrl));
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
  app.route("/", withDeps(healthRoutes, { auth, readiness }));
  // Prometheus metrics for a scraper holding METRICS_TOKEN; without the setting, not served at all.
  if (config.metricsToken) app.route("/metrics", withDeps(metricsRoutes, { auth, metrics: shared.metrics, token: config.metricsToken }));
  // The agent orientation document (discovery's service_documentation) and the public certificate catalog.
  const orientation = { auth, issuer: authUrl, sigmaServiceName: config.sigmaServiceName, agentDynamicHosts: config.agents.dynamicHosts, deprecations, document: {} };
  app.route("/llms.txt", withDeps(llmsTxtRoutes, orientation));
  app.route("/api/certificates/types", withDeps(certificateTypeRoutes, { auth, authUrl }));
  // Before the body limit: a GET of a cached document (routes/jwks.ts).
  app.route(`${BASE_PATH}/jwks`, withDeps(jwksRoutes, { auth, document: jwks }));

  const subscriptionDeps: SubscriptionDeps = { auth, db, logger, authUrl, settings: config.stripe, ...subscriptions };
  // The published Sigma client (@sigma-auth/better-auth-plugin) asks under {base_url}: one handler, two mounts.
  app.route(`${BASE_PATH}/subscription/status`, withDeps(subscriptionStatusRoutes, subscriptionDeps));
  // Before the 64 KiB limit below: the webhook reads up to its own limit.
  app.route("/api/subscription", withDeps(subscriptionRoutes, subscriptionDeps));

  const authBodyLimit = bodyLimit({ maxSize: MAX_BODY_BYTES, onError: tooLarge });
  app.use(`${BASE_PATH}/*`, (c, next) => {
    if (hasNoBody(c.req.raw)) return next();
    const length = declaredLength(c.req.raw);
    if (length === undefined) return authBodyLimit(c, next);
    return length > MAX_BODY_BYTES ? Promise.resolve(tooLarge()) : next();
  });
  // The OpenAPI document and its reference page (openapi/): GET /api/openapi.json, /api/reference.
  app.route("/api/openapi.json", withDeps(openapiDocumentRoutes, { auth, authUrl }));
  app.route("/api/reference", withDeps(apiReferenceRoutes, { auth, authUrl }));
  app.route("/api/admin/audit-log", withDeps(adminAuditLogRoutes, { auth, db }));
  app.route("/api/authorized-apps", withDeps(authorizedAppsRoutes, { auth, db, logger }));
  app.route("/api/agents", withDeps(agentRoutes, { auth, db, authUrl, logger }));
  // Every limit is a row of lib/limits.ts; null when RATE_LIMIT_ENABLED=false.
  const { limits, bitcoinAuth } = shared;
  // Before the 64 KiB limit below: backups carry their own (BACKUP_MAX_BYTES).
  app.route(
    "/api/backup",
    withDeps(backupRoutes, {
      auth,
      db,
      bitcoinAuth: bitcoinAuth.backup,
      syncLimiter: limits?.backupSync ?? null,
      signedReadLimiter: limits?.backupSignedRead ?? null,
      maxBackupBytes: config.backupMaxBytes,
    }),
  );
  const profiles: ProfileDeps = {
    auth,
    db,
    bitcoinAuth: bitcoinAuth.profile,
    writeLimiter: limits?.profileWrite ?? null,
  };
  app.use("/api/user/*", bodyLimit({ maxSize: 64 * 1024, onError: tooLarge }));
  app.use("/api/bap/*", bodyLimit({ maxSize: 64 * 1024, onError: tooLarge }));
  app.route("/api/user", withDeps(userBapIdRoutes, profiles));
  app.route("/api/bap", withDeps(bapProfileRoutes, profiles));
  // One implementation, two mounts: the spec's /api/wallet, and the auth base path where the
  // published Sigma client calls it (before the better-auth catch-all below).
  const wallets = withDeps(walletRoutes, { auth, db, authUrl, bitcoinAuth: bitcoinAuth.wallet, indexer: shared.ordinals, secret: config.secret, allowPathOnly: config.walletConnectAllowPathOnly });
  app.route("/api/wallet", wallets);
  app.route(`${BASE_PATH}/wallet`, wallets);
  const domains = config.domainVerification;
  app.route(
    "/api/domain-verifications",
    withDeps(domainVerificationRoutes, {
      auth,
      db,
      authUrl,
      checks: domainChecks({ resolverServers: domains.resolverServers, safeFetch: createSafeFetch({ allowPrivate: config.outboundAllowPrivate, extraCa: config.outboundExtraCa, maxBytes: 64 * 1024 }) }),
      challenge: { serviceName: config.sigmaServiceName, httpsPort: domains.httpsPort },
      challengeTtlMs: domains.challengeTtl * 1000,
      validityMs: domains.validity * 1000,
      maxPending: domains.maxPending,
      verifyLimiter: limits?.domainVerify ?? null,
    }),
  );
  // better-auth's routes are under AUTH_URL's path (lib/path-prefix.ts): the request it sees names it.
  const prefix = issuerPath(authUrl);
  app.all(`${BASE_PATH}/*`, async (c) => {
    const req = await withBufferedBody(c.req.raw);
    if (typeof req === "string") return refused(c.req.path, req);
    // The limits of lib/limits.ts apply inside auth.handler (auth.config.ts createAuth), 429 with Retry-After.
    const res = await auth.handler(prefix ? underPrefix(req, prefix) : req);
    // The OAuth endpoints speak RFC 6749 even where better-auth's router answered for them (lib/error-families.ts).
    const oauthRoute = oauthRouteOf(c.req.path);
    if (oauthRoute) return asOAuthError(res, oauthRoute);
    // better-auth's router answers a method and path it has no endpoint for with an empty 404
    // (and disabledPaths with a plain-text one); the rest of its surface speaks `{message, code}`.
    if (res.status === 404 && !res.headers.get("content-type")?.includes("json")) return betterAuthErrorResponse(404, ACCOUNT_RESPONSE_ERROR_CODES.ENDPOINT_NOT_FOUND);
    return res;
  });

  app.use("/*", bodyLimit({ maxSize: 64 * 1024, onError: tooLarge }));
  const { mutualAuth } = shared;
  const { issuanceEnabled, revocationDepth } = config.certificates;
  const handshakeLimiter = limits?.mutualAuthHandshake ?? null;
  // Our own MCP server, a protected resource of this authorization server (routes/mcp.ts).
  const mcpTokens = resourceTokenVerifier({ issuer: authUrl, audience: mcpResource(authUrl), jwks });
  app.route(MCP_PATH, withDeps(mcpRoutes, { auth, db, authUrl, tokens: mcpTokens }));
  app.route(MUTUAL_AUTH_PATH, withDeps(mutualAuthRoutes, { auth, mutualAuth, authUrl, issuanceEnabled, handshakeLimiter }));
  // Before /api/certificates: its routes would otherwise see /wallet-binding/* as theirs.
  app.route("/api/certificates/wallet-binding", withDeps(walletBindingRoutes, { auth, db, authUrl }));
  const certificateDeps = { auth, db, mutualAuth, issuanceEnabled, revocationDepth, chain: certificates.chain, types: issuableTypes(certificates.typeIds) };
  app.route("/api/certificates", withDeps(certificateRoutes, certificateDeps));
  // The pages answer / too: the account page for a signed-in person, else /sign-in.
  const billing = { tiers: subscriptions.tiers, stripe: subscriptions.stripe, stripeSettings: config.stripe, indexer: shared.ordinals };
  app.route("/", pageRoutes({ auth, db, authUrl, sigmaServiceName: config.sigmaServiceName, logger, socialProviders: signInProviders(config.social), billing }));

  app.notFound((c) => {
    markUnmatched(c);
    return problemResponse(problems.notFound(), c.req.path);
  });
  app.onError(renderError(logger));
  return app;
}

/** 400 in the family of the route: RFC 6749 on the OAuth endpoints, problem details elsewhere. */
function refused(path: string, detail: string): Response {
  if (errorFamilyOf(path) === "rfc6749") return oauthErrorResponse(new OAuthError("invalid_request", detail));
  return problemResponse(problems.badRequest(detail), path);
}

/** The same request at its public path under AUTH_URL's (the raw form text kept, lib/request-body.ts). */
function underPrefix(req: Request, prefix: string): Request {
  const url = new URL(req.url);
  url.pathname = `${prefix}${url.pathname}`;
  const moved = new Request(url, { method: req.method, headers: req.headers, body: req.body, duplex: "half" } as RequestInit);
  const raw = (req as unknown as Record<symbol, unknown>)[RAW_FORM_BODY];
  if (raw !== undefined) Object.defineProperty(moved, RAW_FORM_BODY, { value: raw });
  return moved;
}
