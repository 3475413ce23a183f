import { execFile, spawn, type ChildProcess } from "node:child_process";
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { freePort } from "./server.js";

/**
 * PostgreSQL and Redis servers of a test's own, started from the machine's binaries, that the
 * fault tests stop and restart at will. The machine's shared PostgreSQL (5432) and Redis (6379)
 * serve the other test files at the same time and are never touched.
 */
const run = promisify(execFile);

/** The newest /usr/lib/postgresql/<version>/bin holding initdb and pg_ctl, if any. */
function postgresBin(): string | null {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return null;
  const versions = readdirSync(root).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a));
  for (const v of versions) {
    const bin = join(root, v, "bin");
    if (existsSync(join(bin, "initdb")) && existsSync(join(bin, "pg_ctl"))) return bin;
  }
  return null;
}

function onPath(name: string): string | null {
  for (const dir of (process.env.PATH ?? "").split(":")) if (dir && existsSync(join(dir, name))) return join(dir, name);
  return null;
}

const PG_BIN = postgresBin();
const REDIS_SERVER = onPath("redis-server");

/** Why the throwaway servers cannot run here, or null when they can. */
export const missingBinaries: string | null =
  !PG_BIN ? "no PostgreSQL binaries (/usr/lib/postgresql/<version>/bin/initdb, pg_ctl)" : !REDIS_SERVER ? "no redis-server on PATH" : null;

/** PostgreSQL refuses to run as root: as root, its commands run as the `postgres` OS user. */
const asRoot = process.getuid?.() === 0;
async function pgCommand(bin: string, args: string[]) {
  const command = join(PG_BIN!, bin);
  return asRoot ? run("runuser", ["-u", "postgres", "--", command, ...args]) : run(command, args);
}

export interface ThrowawayPostgres {
  /** postgres://postgres@127.0.0.1:<port>/<database> */
  url(database?: string): string;
  /** Stops the server (fast shutdown: open sessions are ended, open transactions rolled back). */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it for good and removes its files. */
  destroy(): Promise<void>;
}

export async function startThrowawayPostgres(): Promise<ThrowawayPostgres> {
  const dir = mkdtempSync(join(tmpdir(), "idp-pg-"));
  const data = join(dir, "data");
  mkdirSync(data);
  if (asRoot) {
    const { stdout } = await run("id", ["-u", "postgres"]);
    const { stdout: gid } = await run("id", ["-g", "postgres"]);
    chownSync(dir, Number(stdout), Number(gid));
    chownSync(data, Number(stdout), Number(gid));
  }
  const port = await freePort();
  await pgCommand("initdb", ["-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync"]);
  const options = `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${dir} -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c shared_buffers=16MB -c max_connections=60`;
  const pgCtl = (...args: string[]) => pgCommand("pg_ctl", ["-D", data, "-l", join(dir, "log"), ...args]);
  const start = async () => {
    await pgCtl("-o", options, "-w", "-t", "30", "start");
  };
  await start();
  let destroyed = false;
  return {
    url: (database = "postgres") => `postgres://postgres@127.0.0.1:${port}/${database}`,
    stop: async () => {
      await pgCtl("-m", "fast", "-w", "stop");
    },
    start,
    async destroy() {
      if (destroyed) return;
      destroyed = true;
      await pgCtl("-m", "immediate", "-w", "stop").catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface ThrowawayRedis {
  url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
  destroy(): Promise<void>;
}

/** A redis-server child on a free port, no persistence: a restart starts empty. */
export async function startThrowawayRedis(): Promise<ThrowawayRedis> {
  const port = await freePort();
  let child: ChildProcess | null = null;
  const start = async () => {
    const proc = spawn(REDIS_SERVER!, ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--loglevel", "warning"], { stdio: ["ignore", "pipe", "pipe"] });
    child = proc;
    let out = "";
    proc.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString()));
    proc.stderr!.on("data", (chunk: Buffer) => (out += chunk.toString()));
    for (let i = 0; i < 100; i++) {
      if (proc.exitCode !== null) throw new Error(`redis-server exited: ${out}`);
      if (await pingRedis(port)) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`redis-server did not answer on ${port}: ${out}`);
  };
  const stop = async () => {
    const proc = child;
    child = null;
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise((r) => proc.once("exit", r));
    proc.kill("SIGKILL");
    await exited;
  };
  await start();
  return { url: `redis://127.0.0.1:${port}/0`, start, stop, destroy: stop };
}

async function pingRedis(port: number): Promise<boolean> {
  const { createConnection } = await import("node:net");
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: "127.0.0.1" });
    socket.setTimeout(500, () => (socket.destroy(), resolve(false)));
    socket.once("error", () => resolve(false));
    socket.once("connect", () => socket.write("PING\r\n"));
    socket.once("data", (d) => {
      socket.destroy();
      resolve(d.toString().startsWith("+PONG"));
    });
  });
}
