import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { arg } from "./args.js";

/** The V8 flags `npm start` runs the server with (package.json "start"); --server-node-flags overrides. */
const SERVER_NODE_FLAGS = "--max-semi-space-size=32";

export async function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const srv = createServer();
    srv.once("error", fail);
    srv.listen(0, "127.0.0.1", () => {
      const address = srv.address();
      const port = typeof address === "object" && address ? address.port : 0;
      srv.close(() => ok(port));
    });
  });
}

/**
 * Starts `script` in a child process that serves on a free port (`--port=N` is appended to
 * `args`) and prints `{"ready": url, ...}` on its stdout once it does; answers that URL and
 * the whole line.
 */
export async function spawnServer(script: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ url: string; child: ChildProcess; ready: Record<string, unknown> }> {
  const port = await freePort();
  const flags = (arg("server-node-flags") ?? SERVER_NODE_FLAGS).split(" ").filter(Boolean);
  const child = spawn(process.execPath, [...flags, "--import", "tsx", script, ...args, `--port=${port}`], {
    // Dependencies see a production process (better-auth, hono, kysely branch on it);
    // our own configuration is the explicit record the child builds.
    env: { ...env, NODE_ENV: "production" },
    stdio: ["ignore", "pipe", "inherit", "ipc"],
  });
  const ready = await new Promise<Record<string, unknown>>((ok, fail) => {
    let buffered = "";
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString();
      const line = buffered.split("\n").find((l) => l.startsWith("{"));
      if (line) {
        child.stdout!.off("data", onData);
        ok(JSON.parse(line));
      }
    };
    child.stdout!.on("data", onData);
    child.once("exit", (code) => fail(new Error(`server exited during start-up (${code})`)));
  });
  child.stdout!.resume();
  return { url: String(ready.ready), child, ready };
}

export async function stopServer(child: ChildProcess) {
  if (child.exitCode !== null) return;
  child.kill("SIGTERM");
  await new Promise((ok) => child.once("exit", ok));
}

/** CPU time (user + system) a process has used, in ms; from /proc, so Linux only. */
export function processCpuMs(pid: number | undefined): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in USER_HZ (100)
  } catch {
    return undefined;
  }
}

/**
 * V8 CPU profiles of a child started with `--profiling` (scripts/bench/serve.ts): `profile("start")`
 * before a measured run, `profile("stop", file)` after it.
 */
export function profilerOf(child: ChildProcess) {
  return (what: "start" | "stop", file?: string) =>
    new Promise<void>((ok) => {
      const onMessage = (m: any) => {
        if (m?.profiled !== what) return;
        child.off("message", onMessage);
        ok();
      };
      child.on("message", onMessage);
      child.send({ profile: what, file });
    });
}
