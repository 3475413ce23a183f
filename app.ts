import { Hono } from "hono";
import { requestId } from "hono/request-id";
import type { Kysely } from "kysely";
import type { Auth } from "./auth.config.js";
import type { Collaborators } from "./collaborators.js";
import { BASE_PATH, MCP_PATH, MUTUAL_AUTH_PATH } from "./lib/mount-paths.js";
import type { Config } from "./lib/env.js";
import { problems } from "./lib/errors.js";
import { requestContext, type Logger } from "./lib/logger.js";
import { problemResponse, renderError } from "./lib/respond.js";
import { strictTransportSecurity } from "./lib/strict-transport.js";
import { signInProviders } from "./lib/social-providers.js";
import { DEPRECATED_ROUTES, deprecationNotices, type DeprecatedRoute } from "./lib/deprecations.js";
import { endpointRoute, markUnmatched, requestMetrics } from "./lib/request-metrics.js";
import { resourceTokenVerifier } from "./lib/resource-token.js";
import { dpopResourceGuard } from "./lib/dpop.js";
import { isNetworkPathReference } from "./lib/redirect-target.js";
import { hasNulInForm, NUL_REFUSED } from "./lib/validate.js";
import { issuerPath } from "./lib/path-prefix.js";
import { hasNulInBasic } from "./lib/request-body.js";
import { domainChecks } from "./plugins/domain-verification/checks.js";
import { issuableTypes, type CertificateTypeIds } from "./plugins/certificates/issuance.js";
import type { RevocationChain } from "./plugins/certificates/revocation.js";
import { family, mountFamilies, ownFamily, type RouteFamily } from "./routes/families.js";
import { noStore, refuseOtherSites, signedIn, type AppEnv } from "./routes/middleware.js";
import { authBodyLimit, betterAuthRoutes, MAX_BODY_BYTES, refused } from "./routes/auth/better-auth.js";
import { jwksDocument, jwksRoutes } from "./routes/discovery/jwks.js";
import { llmsTxtRoutes } from "./routes/discovery/llms-txt.js";
import { wellKnownRoutes } from "./routes/discovery/well-known.js";
import { livenessRoutes, readinessRoutes, type HealthDeps } from "./routes/ops/health.js";
import { metricsRoutes } from "./routes/ops/metrics.js";
import { adminAuditLogRoutes } from "./routes/admin/audit-log.js";
import { authorizedAppsRoutes } from "./routes/oauth/authorized-apps.js";
import { agentRoutes } from "./routes/agents/agents.js";
import { backupRoutes } from "./routes/backup/backup.js";
import { backupBodyLimit } from "./routes/backup/access.js";
import { bapProfileRoutes } from "./routes/profile/bap-profile.js";
import { userBapIdRoutes } from "./routes/profile/user-bap-ids.js";
import { SUBSCRIPTION_MAX_BODY_BYTES, subscriptionRoutes, subscriptionStatusRoutes, type SubscriptionDeps } from "./routes/subscription/subscription.js";
import { walletRoutes } from "./routes/wallet/wallet.js";
import { clientAnalyticsCsvRoutes, clientAnalyticsRoutes } from "./routes/clients/analytics.js";
import { domainVerificationRoutes } from "./routes/domain-verifications/domain-verifications.js";
import { certificateRoutes } from "./routes/certificates/certificates.js";
import { certificateTypeRoutes } from "./routes/certificates/types.js";
import { mutualAuthRoutes } from "./routes/certificates/mutual-auth.js";
import { walletBindingRoutes } from "./routes/certificates/wallet-binding.js";
import { mcpRoutes } from "./routes/mcp/mcp.js";
import { mcpResource } from "./lib/mcp-resource.js";
import { pageRoutes } from "./routes/pages/index.js";
import { brandingRoutes } from "./routes/branding/branding.js";
import { brandResolver } from "./plugins/branding/brand.js";
import { apiReferenceRoutes, openapiDocumentRoutes } from "./openapi/routes.js";
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
  /** The JWKS document (routes/discovery/jwks.ts), shared with the fast lane so one cache builds it. @default jwksDocument(auth, shared.jwks) */
  jwks?: () => string | Promise<string>;
  /** Reorders the table of route families before it is mounted (tests prove the order does not matter). */
  order?: (families: RouteFamily[]) => RouteFamily[];
}

/** Pages and our JSON APIs outside better-auth read at most this much. */
const SMALL_BODY_BYTES = 64 * 1024;

export function createApp({ auth, db, logger, authUrl, config, shared, subscriptions, readiness, deprecations = DEPRECATED_ROUTES, certificates, jwks = jwksDocument(auth, shared.jwks), order }: AppDeps) {
  const app = new Hono<AppEnv>();
  // First, to count and time every final answer; better-auth's catch-all is labelled by endpoint.
  const authEndpoint = endpointRoute(BASE_PATH, Object.values(auth.api).map((endpoint) => (endpoint as { path?: string }).path ?? ""));
  app.use(requestMetrics(shared.metrics, (route, path) => (route === `${BASE_PATH}/*` ? authEndpoint(path) : route)));
  if (authUrl.startsWith("https://")) app.use(strictTransportSecurity());

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

  const families = routeFamilies({ auth, db, logger, authUrl, config, shared, subscriptions, readiness, deprecations, certificates, jwks });
  mountFamilies(app, order ? order(families) : families);

  app.notFound((c) => {
    markUnmatched(c);
    return problemResponse(problems.notFound(), c.req.path);
  });
  app.onError(renderError(logger));
  return app;
}

/**
 * The table of route families: each declares its mount paths, the largest body it reads and
 * the guards in front of every route (routes/families.ts mounts them, most specific path first,
 * so this order does not matter). Guards a single route needs stay on that route.
 */
function routeFamilies({ auth, db, logger, authUrl, config, shared, subscriptions, readiness, deprecations, certificates, jwks }: Required<Omit<AppDeps, "order">>): RouteFamily[] {
  // RFC 9449 §7.1 at our resources that take OAuth tokens (/api/backup, /mcp): one proof check, the token endpoint's replay records and nonces.
  const dpop = dpopResourceGuard({ authUrl, replay: shared.dpopReplay, nonces: shared.dpopNonces });
  // Every limit is a row of lib/limits.ts; null when RATE_LIMIT_ENABLED=false.
  const { limits, bitcoinAuth, mutualAuth } = shared;
  // A cookie alone changes nothing from another site (routes/middleware.ts).
  const sameSite = refuseOtherSites(() => authUrl);
  const { issuanceEnabled, revocationDepth } = config.certificates;
  const domains = config.domainVerification;
  const profiles = { auth, db, bitcoinAuth: bitcoinAuth.profile, writeLimiter: limits?.profileWrite ?? null };
  // Client brands in force (plugins/branding): the owner's tier from the tier service; the API and the pages share it.
  const brands = brandResolver({ db, tiers: subscriptions.tiers });
  const families: RouteFamily[] = [
    // better-auth (auth.config.ts) answers everything under BASE_PATH no family below claims.
    family({ name: "better-auth", bodyLimit: authBodyLimit, deps: { auth, prefix: issuerPath(authUrl) }, routes: { [BASE_PATH]: betterAuthRoutes } }),
    // GET of a cached document; its limit is better-auth's, whose path it sits under.
    family({ name: "jwks", bodyLimit: MAX_BODY_BYTES, deps: { auth, document: jwks }, routes: { [`${BASE_PATH}/jwks`]: jwksRoutes } }),
    family({ name: "well-known", bodyLimit: SMALL_BODY_BYTES, deps: { auth, issuer: authUrl, documents: new Map() }, routes: { "/.well-known": wellKnownRoutes } }),
    // The agent orientation document (discovery's service_documentation).
    family({
      name: "llms-txt",
      bodyLimit: SMALL_BODY_BYTES,
      deps: { auth, issuer: authUrl, sigmaServiceName: config.sigmaServiceName, agentDynamicHosts: config.agents.dynamicHosts, deprecations, document: {} },
      routes: { "/llms.txt": llmsTxtRoutes },
    }),
    family({ name: "health", bodyLimit: SMALL_BODY_BYTES, guards: [noStore], deps: { auth, readiness }, routes: { "/healthz": livenessRoutes, "/readyz": readinessRoutes } }),
    // The OpenAPI document and its reference page (openapi/).
    family({ name: "openapi", bodyLimit: SMALL_BODY_BYTES, deps: { auth, authUrl }, routes: { "/api/openapi.json": openapiDocumentRoutes, "/api/reference": apiReferenceRoutes } }),
    family({ name: "admin-audit-log", bodyLimit: SMALL_BODY_BYTES, guards: [noStore], deps: { auth, db }, routes: { "/api/admin/audit-log": adminAuditLogRoutes } }),
    family({ name: "authorized-apps", bodyLimit: SMALL_BODY_BYTES, guards: [noStore], deps: { auth, db, logger }, routes: { "/api/authorized-apps": authorizedAppsRoutes } }),
    family({ name: "agents", bodyLimit: SMALL_BODY_BYTES, guards: [noStore], deps: { auth, db, authUrl, logger }, routes: { "/api/agents": agentRoutes } }),
    // Backups carry their own limit (BACKUP_MAX_BYTES, with its own detail).
    family({
      name: "backup",
      bodyLimit: backupBodyLimit,
      guards: [noStore],
      deps: { auth, db, bitcoinAuth: bitcoinAuth.backup, syncLimiter: limits?.backupSync ?? null, signedReadLimiter: limits?.backupSignedRead ?? null, maxBackupBytes: config.backupMaxBytes, dpop },
      routes: { "/api/backup": backupRoutes },
    }),
    family({ name: "profile", bodyLimit: SMALL_BODY_BYTES, guards: [noStore], deps: profiles, routes: { "/api/user": userBapIdRoutes, "/api/bap": bapProfileRoutes } }),
    // The published Sigma client (@sigma-auth/better-auth-plugin) asks under {base_url}: one router, two mounts.
    family({
      name: "subscription",
      bodyLimit: SUBSCRIPTION_MAX_BODY_BYTES,
      guards: [noStore],
      deps: { auth, db, logger, authUrl, settings: config.stripe, ...subscriptions },
      routes: { "/api/subscription": subscriptionRoutes, [`${BASE_PATH}/subscription/status`]: subscriptionStatusRoutes },
    }),
    // Per-client analytics (Pro) for the client's owner (plugins/analytics).
    family({
      name: "client-analytics",
      bodyLimit: SMALL_BODY_BYTES,
      guards: [noStore, signedIn, sameSite],
      deps: { auth, db, tiers: subscriptions.tiers },
      routes: { "/api/clients/:clientId/analytics": clientAnalyticsRoutes, "/api/clients/:clientId/analytics.csv": clientAnalyticsCsvRoutes },
    }),
    family({
      name: "wallet",
      bodyLimit: SMALL_BODY_BYTES,
      guards: [noStore, signedIn, sameSite],
      deps: { auth, db, authUrl, bitcoinAuth: bitcoinAuth.wallet, indexer: shared.ordinals, secret: config.secret, allowPathOnly: config.walletConnectAllowPathOnly },
      routes: { "/api/wallet": walletRoutes, [`${BASE_PATH}/wallet`]: walletRoutes },
    }),
    family({
      name: "domain-verifications",
      bodyLimit: SMALL_BODY_BYTES,
      guards: [noStore, signedIn, sameSite],
      deps: {
        auth,
        db,
        authUrl,
        checks: domainChecks({ resolverServers: domains.resolverServers, safeFetch: shared.safeFetch.withLimits({ maxBytes: 64 * 1024 }) }),
        challenge: { serviceName: config.sigmaServiceName, httpsPort: domains.httpsPort },
        challengeTtlMs: domains.challengeTtl * 1000,
        validityMs: domains.validity * 1000,
        maxPending: domains.maxPending,
        verifyLimiter: limits?.domainVerify ?? null,
      },
      routes: { "/api/domain-verifications": domainVerificationRoutes },
    }),
    // Client branding (Plus and Pro): the owner's routes, and the stored logo the pages load (public, cached).
    family({
      name: "client-branding",
      bodyLimit: SMALL_BODY_BYTES,
      guards: [sameSite],
      deps: { auth, db, tiers: subscriptions.tiers, brands, safeFetch: shared.safeFetch, logoMaxBytes: config.brandingLogoMaxBytes },
      routes: { "/api/clients": brandingRoutes },
    }),
    // Our own MCP server, a protected resource of this authorization server (routes/mcp/mcp.ts).
    family({
      name: "mcp",
      bodyLimit: SMALL_BODY_BYTES,
      deps: { auth, db, authUrl, tokens: resourceTokenVerifier({ issuer: authUrl, audience: mcpResource(authUrl), jwks }), dpop },
      routes: { [MCP_PATH]: mcpRoutes },
    }),
    family({
      name: "mutual-auth",
      bodyLimit: SMALL_BODY_BYTES,
      deps: { auth, mutualAuth, authUrl, issuanceEnabled, handshakeLimiter: limits?.mutualAuthHandshake ?? null },
      routes: { [MUTUAL_AUTH_PATH]: mutualAuthRoutes },
    }),
    // The public certificate catalog.
    family({ name: "certificate-types", bodyLimit: SMALL_BODY_BYTES, deps: { auth, authUrl }, routes: { "/api/certificates/types": certificateTypeRoutes } }),
    family({ name: "wallet-binding", bodyLimit: SMALL_BODY_BYTES, guards: [noStore], deps: { auth, db, authUrl }, routes: { "/api/certificates/wallet-binding": walletBindingRoutes } }),
    family({
      name: "certificates",
      bodyLimit: SMALL_BODY_BYTES,
      guards: [noStore],
      deps: { auth, db, mutualAuth, issuanceEnabled, revocationDepth, chain: certificates.chain, logger, types: issuableTypes(certificates.typeIds) },
      routes: { "/api/certificates": certificateRoutes },
    }),
    // The pages answer / too: the account page for a signed-in person, else /sign-in.
    ownFamily("pages", SMALL_BODY_BYTES, {
      "/": pageRoutes({
        auth,
        db,
        authUrl,
        sigmaServiceName: config.sigmaServiceName,
        logger,
        socialProviders: signInProviders(config.social),
        billing: { tiers: subscriptions.tiers, stripe: subscriptions.stripe, stripeSettings: config.stripe, indexer: shared.ordinals },
        support: { email: config.supportEmail, mailer: shared.mailer, limiter: limits?.supportMessage ?? null },
        chrome: { ...config.pageChrome, brands, safeFetch: shared.safeFetch, logoMaxBytes: config.brandingLogoMaxBytes },
      }),
    }),
  ];
  // Prometheus metrics for a scraper holding METRICS_TOKEN; without the setting, not served at all.
  if (config.metricsToken) families.push(family({ name: "metrics", bodyLimit: SMALL_BODY_BYTES, deps: { auth, metrics: shared.metrics, token: config.metricsToken }, routes: { "/metrics": metricsRoutes } }));
  return families;
}
