import { createServer, type IncomingMessage } from "node:http";
import { getRequestListener } from "@hono/node-server";
import { createApp } from "./app.js";
import { authOptions, createAuth, type AuthDeps } from "./auth.config.js";
import { CLIENT_IP_HEADER } from "./lib/transport.js";
import { clientAddress } from "./lib/client-address.js";
import { createDb } from "./lib/db.js";
import { ConfigError, loadEnv, type Config } from "./lib/env.js";
import { createLogger } from "./lib/logger.js";
import type { Mailer } from "./lib/mailer.js";
import { applyMigrations, baselineLegacyDatabase, pendingMigrations, planMigrations } from "./lib/migrate.js";
import { createRedis } from "./lib/redis.js";
import { ordinalsIndexer } from "./plugins/wallet/ordinals.js";

/** Optional collaborators a caller may inject (tests capture mail this way). */
export interface StartOptions {
  mailer?: Mailer;
}

/** Composition root: loadEnv -> createDb -> createAuth -> createApp -> serve. */
export async function start(config: Config, options: StartOptions = {}) {
  const logger = createLogger(config.logLevel);
  for (const warning of config.warnings) logger.warn(`WARNING: ${warning}`);
  const database = createDb(config.database, { onPoolError: (err) => logger.warn("database connection lost", { err }), backgroundCheckpoint: true });
  const redis = config.redisUrl ? createRedis(config.redisUrl) : undefined;
  // One indexer client (and so one NFT cache) for the wallet routes and the agent capability.
  const ordinals = ordinalsIndexer(config);
  const deps = { config, database, logger, redis, mailer: options.mailer, ordinals };

  try {
    await migrateAtStartUp(deps);
  } catch (err) {
    await database.close();
    redis?.disconnect();
    throw err;
  }

  const auth = createAuth(deps);
  const app = createApp({ auth, db: database.db, logger, authUrl: config.authUrl, config, redis, ordinals });
  const listener = getRequestListener(app.fetch);
  const server = createServer((req: IncomingMessage, res) => {
    // The peer address: from the socket, or TRUST_PROXY_HOPS entries from the right of
    // X-Forwarded-For behind our own proxies (lib/client-address.ts); never the client's own claim.
    const ip = clientAddress(req.headers["x-forwarded-for"], req.socket.remoteAddress, config.proxyHops);
    // @hono/node-server builds the Request from rawHeaders: drop any client-sent copy, add ours.
    const raw = req.rawHeaders;
    for (let i = raw.length - 2; i >= 0; i -= 2) if (raw[i]!.toLowerCase() === CLIENT_IP_HEADER) raw.splice(i, 2);
    raw.push(CLIENT_IP_HEADER, ip);
    req.headers[CLIENT_IP_HEADER] = ip;
    void listener(req, res);
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
    database,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await database.close();
      redis?.disconnect();
    },
  };
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
    const stop = () => void running.close().then(() => process.exit(0));
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
