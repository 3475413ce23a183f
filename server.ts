import { createServer, type IncomingMessage } from "node:http";
import { getRequestListener } from "@hono/node-server";
import { createApp } from "./app.js";
import { CLIENT_IP_HEADER, authOptions, createAuth } from "./auth.config.js";
import { createDb } from "./lib/db.js";
import { ConfigError, loadEnv, type Config } from "./lib/env.js";
import { createLogger } from "./lib/logger.js";
import type { Mailer } from "./lib/mailer.js";
import { planMigrations } from "./lib/migrate.js";
import { createRedis } from "./lib/redis.js";

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
  const deps = { config, database, logger, redis, mailer: options.mailer };

  const plan = await planMigrations(authOptions(deps));
  if (plan.pending.length) {
    if (!config.autoMigrate) {
      await database.close();
      redis?.disconnect();
      throw new ConfigError(
        `The database schema is behind (${plan.pending.length} change(s): ${plan.pending.slice(0, 5).join(", ")}${plan.pending.length > 5 ? ", ..." : ""}). ` +
          "Run `npm run db:migrate`, or start with AUTO_MIGRATE=true.",
      );
    }
    await plan.apply();
    logger.info("schema migrated", { changes: plan.pending.length });
  }

  const auth = createAuth(deps);
  const app = createApp({ auth, db: database.db, logger, authUrl: config.authUrl, config, redis });
  const listener = getRequestListener(app.fetch);
  const server = createServer((req: IncomingMessage, res) => {
    // The peer address, from the socket unless we sit behind a trusted proxy; never from the client.
    const forwarded = config.trustProxy ? String(req.headers["x-forwarded-for"] ?? "").split(",")[0]?.trim() : "";
    const ip = forwarded || req.socket.remoteAddress || "unknown";
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
