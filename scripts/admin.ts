/**
 * The operator's CLI, on the same settings and services as the server (issue 12, Operations).
 *
 *   npm run admin -- <command> [--json]
 *     clients list                         clients disable <clientId>    clients enable <clientId>
 *     clients resources <clientId> [<resource>... | --all]   (RFC 8707 allow-list: set, clear, show)
 *     keys rotate                          users ban <email|id> [--reason TEXT]
 *     users unban <email|id>               sessions list <email|id>
 *     sessions revoke <email|id> (--all | <sessionId>)
 *     openapi export [file]                (standard output without a file)
 *
 * Human-readable lines by default, one JSON document with --json. Bad input: a message on
 * standard error and exit code 1. Every command that runs writes an `admin.action` audit row.
 */
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { createAuth, type Auth } from "../auth.config.js";
import { createCollaborators } from "../collaborators.js";
import { createDb, type DatabaseHandle } from "../lib/db/connection.js";
import { ConfigError, loadEnv } from "../lib/env.js";
import { createLogger, type Logger } from "../lib/logger.js";
import { createRedis } from "../lib/redis.js";
import { buildOpenApiDocument } from "../openapi/index.js";
import { adminCommands, UsageError, type AdminServices } from "./admin-commands.js";

const USAGE = `usage: npm run admin -- <command> [--json]
  clients list | clients disable <clientId> | clients enable <clientId>
  clients resources <clientId> [<resource>... | --all]
  keys rotate
  users ban <email|id> [--reason TEXT] | users unban <email|id>
  sessions list <email|id> | sessions revoke <email|id> (--all | <sessionId>)
  openapi export [file]`;

function fail(message: string): never {
  process.stderr.write(`admin: ${message}\n`);
  process.exit(1);
}

let parsed;
try {
  parsed = parseArgs({ allowPositionals: true, options: { json: { type: "boolean" }, all: { type: "boolean" }, reason: { type: "string" }, help: { type: "boolean" } } });
} catch (err) {
  fail(`${(err as Error).message}\n${USAGE}`);
}
const { values: flags, positionals } = parsed;
if (flags.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const name = positionals.slice(0, 2).join(" ");
const command = adminCommands[name];
if (!command) fail(`${positionals.length ? `unknown command "${name}"` : "no command given"}\n${USAGE}`);

let config;
try {
  config = loadEnv();
} catch (err) {
  if (err instanceof ConfigError) fail(err.message);
  throw err;
}
// Log lines (warnings) go to standard error; the command's output is standard output.
const logger: Logger = createLogger(config.logLevel === "debug" ? "debug" : "warn");
const database: DatabaseHandle = createDb(config.database);
const redis = config.redisUrl ? createRedis(config.redisUrl) : undefined;
const shared = createCollaborators({ config, logger, redis });
const auth: Auth = createAuth({ config, database, logger, redis, shared });
// Plugin start-up writes to the database (oauth-provider seeds its resources): let it finish
// before any command, or closing the pool at the end races it and the process exits 1.
await auth.$context;
const services: AdminServices = {
  auth,
  db: database.db,
  logger,
  exportOpenApi: async () => buildOpenApiDocument(auth, config.authUrl),
  writeFile: (file, text) => writeFileSync(file, text),
};

let code = 0;
try {
  const result = await command(services, positionals.slice(2), { all: flags.all ?? false, reason: flags.reason });
  if (flags.json) process.stdout.write(`${JSON.stringify(result.json, null, 2)}\n`);
  else if (result.lines.length) process.stdout.write(`${result.lines.join("\n")}\n`);
} catch (err) {
  if (!(err instanceof UsageError)) throw err;
  process.stderr.write(`admin: ${err.message}\n`);
  code = 1;
} finally {
  await database.close();
  redis?.disconnect();
}
process.exit(code);
