import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { getRequestListener } from "@hono/node-server";
import { createApp, type AppDeps } from "./app.js";
import { issuerPath, servedUnder } from "./lib/path-prefix.js";
import { createFastLane } from "./lib/fast-lane.js";
import { fastLaneRoutes } from "./routes/fast-lane.js";
import { jwksDocument } from "./routes/discovery/jwks.js";
import { authOptions, createAuth, type AuthDeps } from "./auth.config.js";
import { createCollaborators } from "./collaborators.js";
import { CLIENT_IP_HEADER, clientAddress } from "./lib/client-address.js";
import { createDb } from "./lib/db/connection.js";
import { DEPRECATED_ROUTES, deprecationOf, type DeprecatedRoute } from "./lib/deprecations.js";
import { ConfigError, loadEnv, type Config } from "./lib/env.js";
import type { DestinationStream } from "pino";
import type { SafeFetch } from "./lib/safe-fetch.js";
import { createLogger } from "./lib/logger.js";
import type { Mailer } from "./lib/mailer.js";
import { applyMigrations, baselineLegacyDatabase, pendingMigrations, planMigrations } from "./lib/migrate.js";
import { createReadiness } from "./lib/readiness.js";
import { createRedis, firstConnection } from "./lib/redis.js";
import { httpMinter, NO_MINTING_SERVICE, type BuyerWallet, type Minter } from "./plugins/subscriptions/minter.js";
import { createTierService, type TierOwnershipChecker } from "./plugins/subscriptions/ownership.js";
import { startAnalyticsFlush } from "./plugins/analytics/flush.js";
import { createStripe } from "./plugins/subscriptions/stripe.js";
import { primaryBuyerWallet, walletTierOwnership } from "./plugins/subscriptions/wallets.js";
import type { CertificateTypeIds } from "./plugins/certificates/issuance.js";
import { NO_REVOCATION_CHAIN, type RevocationChain } from "./plugins/certificates/revocation.js";
import { startMintWorker, type MintWorkerOptions } from "./plugins/subscriptions/worker.js";
import { startClientExpiry } from "./plugins/registration-management/expiry.js";
import { startAssertionExpiry } from "./plugins/client-keys/assertion-expiry.js";
import { startCibaExpiry } from "./plugins/ciba/expiry.js";
import { startAuditRetention, type AuditRetentionOptions } from "./plugins/audit/retention.js";
import { certificateTypeId, findCertificateTypeByKey } from "./plugins/certificates/catalog.js";
import { arcRevocationChain } from "./plugins/certificates/arc-chain.js";
import { indexerFundingSource } from "./plugins/certificates/funding.js";
import { startRevocationWatch } from "./plugins/certificates/revocation-watch.js";

/** Optional collaborators a caller may inject (tests capture mail this way). */
export interface StartOptions {
  mailer?: Mailer;
  /** Where log lines go (default: standard error); tests read them to check what is logged. */
  logDestination?: DestinationStream;
  /** Paid tiers' collaborators; each defaults to the configured implementation. */
  subscriptions?: {
    /** Who owns which tier NFT. Default: the connected wallets' NFTs through the indexer (TIER_NFT_*). */
    ownership?: TierOwnershipChecker;
    /** The buyer's wallet to mint to. Default: the primary wallet of the primary identity. */
    wallets?: BuyerWallet;
    /** Default: the HTTP minting service at MINT_SERVICE_URL. */
    minter?: Minter;
    worker?: Pick<MintWorkerOptions, "pollMs" | "baseDelayMs" | "maxDelayMs" | "maxAttempts" | "waitMs" | "lockMs">;
  };
  /** The deprecated-routes table (lib/deprecations.ts). Default: DEPRECATED_ROUTES. */
  deprecations?: readonly DeprecatedRoute[];
  /** Certificates' collaborators: the revocation chain (default: ARC with CERTIFICATE_FUNDING_KEY, else none) and the catalog's type IDs of what we attest. */
  certificates?: { chain?: RevocationChain; typeIds?: CertificateTypeIds };
  /** How often revocations in progress are moved on without a request (plugins/certificates/revocation-watch.ts). Default: every minute. */
  revocationWatch?: { everyMs?: number };
  /** The audit log's pruning rounds (AUDIT_LOG_RETENTION_DAYS): how often, the lease, the batch. */
  auditRetention?: Pick<AuditRetentionOptions, "everyMs" | "leaseMs" | "batchSize">;
  /** Reorders app.ts's table of route families (tests/ops/route-families.test.ts: the order does not matter). */
  routeOrder?: AppDeps["order"];
}

/**
 * Composition root: loadEnv -> createDb -> shared collaborators -> createAuth -> createApp -> serve.
 * The collaborators (signing-key cache, Bitcoin-Auth replay policies, mailer, where limiters
 * count) are built here once; better-auth's plugins and our routes get the same objects.
 */
export async function start(config: Config, options: StartOptions = {}) {
  const logger = createLogger(config.logLevel, options.logDestination);
  for (const warning of config.warnings) logger.warn(`WARNING: ${warning}`);
  const database = createDb(config.database, { onPoolError: (err) => logger.warn("database connection lost", { err }), backgroundCheckpoint: true });
  const redis = config.redisUrl
    ? createRedis(config.redisUrl, { onDown: (err) => logger.warn("redis connection lost", { err }), onUp: () => logger.info("redis connection restored") })
    : undefined;
  const shared = createCollaborators({ config, logger, redis, mailer: options.mailer });
  if (database.pool) shared.metrics.watchPool(database.pool);
  const deps: AuthDeps = { config, database, logger, redis, shared };

  try {
    await migrateAtStartUp(deps);
  } catch (err) {
    await database.close();
    redis?.disconnect();
    throw err;
  }
  // Limits count in Redis from the first request (lib/redis.ts firstConnection).
  if (redis) await firstConnection(redis);

  const paid = options.subscriptions ?? {};
  // The tier is the NFTs the user's connected wallets hold, read through the shared indexer client.
  const ownership = paid.ownership ?? walletTierOwnership({ db: database.db, indexer: shared.ordinals, collections: config.tierNfts });
  const tiers = createTierService({ db: database.db, checker: ownership, logger });
  const auth = createAuth({ ...deps, tiers });
  // Plugins' init (oauth-provider seeds its resources, e.g. /mcp) runs before we serve, so it
  // neither races the first requests nor outlives a server closed at once.
  await auth.$context;
  // The mint queue runs in every instance that can mint; jobs are claimed one worker at a time
  // (plugins/subscriptions/worker.ts). Without a minting service, jobs wait, saying so.
  const minter =
    paid.minter ??
    (config.minting.serviceUrl ? httpMinter({ url: config.minting.serviceUrl, token: config.minting.token, fetch: shared.safeFetch }) : null);
  const mintWorker = minter ? startMintWorker({ db: database.db, minter, wallets: paid.wallets ?? primaryBuyerWallet(database.db), logger, ...paid.worker }) : null;
  if (!minter) logger.warn("MINT_SERVICE_URL is not set: paid checkouts are recorded, their tier NFTs wait in the mint queue");
  const subscriptions = {
    tiers,
    stripe: createStripe(config.stripe),
    mintWaitReason: minter ? null : NO_MINTING_SERVICE,
    onMintQueued: () => mintWorker?.wake(),
  };
  const expiry = config.anonymousClientTtlDays > 0 ? startClientExpiry({ db: database.db, ttlDays: config.anonymousClientTtlDays, logger }) : null;
  // Spent private_key_jwt assertions' single-use records, once expired (plugins/client-keys).
  const assertionExpiry = startAssertionExpiry({ db: database.db, logger });
  // CIBA requests an hour past their expiry (plugins/ciba).
  const cibaExpiry = startCibaExpiry({ db: database.db, logger });
  // Every instance runs the rounds; the one holding the lease prunes (plugins/audit/retention.ts).
  const auditRetention = config.auditLogRetentionDays > 0 ? startAuditRetention({ db: database.db, logger, retentionDays: config.auditLogRetentionDays, ...options.auditRetention }) : null;
  // Per-client analytics counted in memory by the hooks, written every ANALYTICS_FLUSH_MS and at close (plugins/analytics/flush.ts).
  const analytics = startAnalyticsFlush({ db: database.db, counter: shared.analytics, logger, everyMs: config.analyticsFlushMs });
  const readiness = createReadiness({ database, redis });
  // What we attest is the catalog's bapWalletBinding type (plugins/certificates/catalog.ts), by its fixed type ID.
  const binding = findCertificateTypeByKey("bapWalletBinding");
  const catalogIds = binding ? { bapWalletBinding: certificateTypeId(binding) } : {};
  const certificates = { chain: options.certificates?.chain ?? revocationChain(config, shared.safeFetch), typeIds: options.certificates?.typeIds ?? catalogIds };
  // Revocations go on to `confirmed` without anyone asking, once there is a chain to ask.
  const revocationWatch = certificates.chain.enabled
    ? startRevocationWatch({ db: database.db, chain: certificates.chain, depth: config.certificates.revocationDepth, logger, everyMs: options.revocationWatch?.everyMs })
    : null;
  // One JWKS document for the app and the fast lane: one cache builds it (and creates the first key).
  const jwks = jwksDocument(auth, shared.jwks);
  const app = createApp({ auth, db: database.db, logger, authUrl: config.authUrl, config, shared, subscriptions, readiness, deprecations: options.deprecations, certificates, jwks, order: options.routeOrder });
  // Under AUTH_URL's path when it has one, with the path-inserted discovery URLs at the root (lib/path-prefix.ts).
  const listener = getRequestListener(servedUnder(app.fetch, config.authUrl));
  // Discovery, JWKS and the common introspection, answered before the app (lib/fast-lane.ts);
  // with a path in AUTH_URL everything goes through the app (lib/path-prefix.ts).
  const lane = issuerPath(config.authUrl)
    ? null
    : createFastLane({
        // A route on its way out keeps its Deprecation and Sunset headers: the app answers it.
        routes: fastLaneRoutes({ auth, app, config, database, jwks, metrics: shared.metrics, logger, analytics: shared.analytics, redis }).filter((r) => !deprecationOf(options.deprecations ?? DEPRECATED_ROUTES, r.method, r.path)),
        metrics: shared.metrics,
        limiters: shared.limits,
        https: config.authUrl.startsWith("https://"),
      });
  let draining = false;
  // Requests being handled, for the drain: http.Server's own close callback can come while a
  // request's body is still arriving.
  const inFlight = new Set<ServerResponse>();
  let drained: (() => void) | null = null;
  const server = createServer((req: IncomingMessage, res) => {
    inFlight.add(res);
    res.once("close", () => {
      inFlight.delete(res);
      if (inFlight.size === 0) drained?.();
    });
    // While draining, every answer closes its connection, so a keep-alive client does not hold the shutdown.
    if (draining) res.setHeader("connection", "close");
    // The peer address: from the socket, or TRUST_PROXY_HOPS entries from the right of
    // X-Forwarded-For behind our own proxies (lib/client-address.ts); never the client's own claim.
    const ip = clientAddress(req.headers["x-forwarded-for"], req.socket.remoteAddress, config.proxyHops);
    // @hono/node-server builds the Request from rawHeaders: drop any client-sent copy, add ours.
    const raw = req.rawHeaders;
    for (let i = raw.length - 2; i >= 0; i -= 2) if (raw[i]!.toLowerCase() === CLIENT_IP_HEADER) raw.splice(i, 2);
    raw.push(CLIENT_IP_HEADER, ip);
    req.headers[CLIENT_IP_HEADER] = ip;
    if (lane) lane(req, res, listener);
    else void listener(req, res);
  });
  server.keepAliveTimeout = 65_000;
  server.requestTimeout = 30_000;
  server.headersTimeout = 20_000;
  await new Promise<void>((resolve) => server.listen(config.port, config.host, resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : config.port;
  logger.info("listening", { url: config.authUrl, port, database: config.database.kind, redis: Boolean(redis) });

  return {
    port,
    server,
    auth,
    /** The Hono app (tests read `app.routes` to check the OpenAPI document covers every route). */
    app,
    database,
    logger,
    /** The analytics flusher: `analytics.flush()` writes the counts so far (tests wait on it). */
    analytics,
    /**
     * Graceful stop: no new connections (the listener closes), requests in flight finish and their
     * connections close after the answer (idle keep-alive ones at once), then the workers, the
     * database pool and Redis are closed. Connections still busy after `graceMs` are cut.
     */
    async close({ graceMs = 10_000 }: { graceMs?: number } = {}) {
      draining = true;
      // The listener closes (and, on Node 19+, idle keep-alive connections with it).
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Requests already in flight close their connection after their answer.
      for (const res of inFlight) if (!res.headersSent) res.setHeader("connection", "close");
      const idle = new Promise<void>((resolve) => {
        drained = resolve;
        if (inFlight.size === 0) resolve();
      });
      let cut: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => {
        cut = setTimeout(resolve, graceMs);
      });
      try {
        await Promise.race([Promise.all([closed, idle]), late]);
      } finally {
        clearTimeout(cut);
        server.closeAllConnections();
      }
      await mintWorker?.stop();
      expiry?.stop();
      assertionExpiry.stop();
      cibaExpiry.stop();
      revocationWatch?.stop();
      await auditRetention?.stop();
      // The counts of the last requests, before the database closes.
      await analytics.stop();
      await database.close();
      await redis?.quit().catch(() => redis.disconnect());
    },
  };
}

/** The revocation chain: ARC, funded by CERTIFICATE_FUNDING_KEY's coins as the ordinals indexer lists them; none without the key. */
function revocationChain(config: Config, fetch: SafeFetch): RevocationChain {
  const { fundingKey, arc } = config.certificates;
  if (!fundingKey) return NO_REVOCATION_CHAIN;
  return arcRevocationChain({ arcUrl: arc.url, apiKey: arc.apiKey, fundingKey, funding: indexerFundingSource(config.ordinals.apiUrl, fetch), fetch });
}

const list = (items: string[]) => `${items.length}: ${items.slice(0, 5).join(", ")}${items.length > 5 ? ", ..." : ""}`;

/**
 * Brings the database to schema/ (SQLite always; PostgreSQL only with AUTO_MIGRATE=true, as
 * several instances and a DBA may share it), then checks that schema/ gives the code's schema:
 * a field added in code without `npm run db:generate` stops the start instead of failing requests.
 */
async function migrateAtStartUp(deps: AuthDeps) {
  const { config, database, logger } = deps;
  const baseline = await baselineLegacyDatabase(database);
  if (baseline.length) logger.info("schema baselined: the tables were already there", { migrations: baseline });
  const pending = await pendingMigrations(database);
  if (pending.length) {
    if (!config.autoMigrate) {
      throw new ConfigError(`The database schema is behind (${list(pending)}). Run \`npm run db:migrate\`, or start with AUTO_MIGRATE=true.`);
    }
    logger.info("schema migrated", { migrations: await applyMigrations(database) });
  }
  const drift = await planMigrations(authOptions(deps));
  if (drift.pending.length) {
    throw new ConfigError(
      `The code's schema has changes no file in schema/${database.type}/ holds (${list(drift.pending)}). ` +
        "Run `npm run db:generate`, review and commit the new files, then `npm run db:migrate`.",
    );
  }
}

const isMain = import.meta.url === `file://${process.argv[1]}`;
if (isMain) {
  try {
    const running = await start(loadEnv());
    // A rejection nothing awaited (a dependency's background work) is logged; it never ends the process.
    process.on("unhandledRejection", (err) => running.logger.error("unhandled rejection", { err }));
    let stopping = false;
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) return;
      stopping = true;
      running.logger.info("stopping: draining requests", { signal });
      running.close().then(
        () => process.exit(0),
        (err: unknown) => {
          running.logger.error("stop failed", { err });
          process.exit(1);
        },
      );
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`\n${err.message}\n\n`);
      process.exit(1);
    }
    throw err;
  }
}
