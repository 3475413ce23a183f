import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { arg } from "./args.js";

/**
 * The child process of `npm run bench`: our real server (server.ts `start`) with the shipped
 * defaults, rate limits included (RATE_LIMIT_ENABLED is never set here), on a SQLite file in
 * `dir`, or on `--database-url` and `--redis-url` when given (--db=postgres).
 */
export async function serveOurs(dir: string, port: number) {
  const { loadEnv } = await import("../../lib/env.js");
  const { start } = await import("../../server.js");
  const url = `http://127.0.0.1:${port}`;
  const databaseUrl = arg("database-url");
  const redisUrl = arg("redis-url");
  const config = loadEnv({
    NODE_ENV: "development",
    PORT: String(port),
    HOST: "127.0.0.1",
    AUTH_URL: url,
    DATA_DIR: dir,
    DATABASE_URL: databaseUrl ?? join(dir, "bench.sqlite"),
    ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
    BETTER_AUTH_SECRET: randomBytes(32).toString("base64url"),
    LOG_LEVEL: "error",
    AUTO_MIGRATE: "true",
  });
  const running = await start(config);
  const slowMs = Number(arg("slow-introspect-ms") ?? 0);
  if (slowMs > 0) slowIntrospection(running.server, slowMs);
  process.stdout.write(JSON.stringify({ ready: url, limits: config.limits.enabled }) + "\n");
  const stop = () => void running.close().then(() => process.exit(0));
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  if (arg("profiling") === "true") await answerProfiling();
}

/** --cpu-prof: the parent asks for a V8 CPU profile around each measured run only. */
export async function answerProfiling() {
  const { Session } = await import("node:inspector/promises");
  const session = new Session();
  session.connect();
  process.on("message", async (msg: { profile: "start" | "stop"; file?: string }) => {
    if (msg.profile === "start") {
      await session.post("Profiler.enable");
      await session.post("Profiler.setSamplingInterval", { interval: 200 });
      await session.post("Profiler.start");
    } else {
      const { profile } = await session.post("Profiler.stop");
      writeFileSync(msg.file!, JSON.stringify(profile));
    }
    process.send!({ profiled: msg.profile });
  });
}

/**
 * The speed guard's self-test (scripts/bench/guard.ts --self-test): every introspection request
 * costs `ms` more CPU, burnt before the server sees it; the server's own code is untouched.
 */
function slowIntrospection(server: import("node:http").Server, ms: number) {
  const [listener] = server.listeners("request") as ((req: import("node:http").IncomingMessage, res: import("node:http").ServerResponse) => void)[];
  server.removeAllListeners("request");
  server.on("request", (req, res) => {
    if (req.method === "POST" && req.url?.startsWith("/api/auth/oauth2/introspect")) {
      const until = process.hrtime.bigint() + BigInt(Math.round(ms * 1e6));
      while (process.hrtime.bigint() < until);
    }
    listener!(req, res);
  });
}
