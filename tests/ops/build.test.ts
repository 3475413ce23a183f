import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

/**
 * `npm run build`: the server compiled to plain JavaScript runs on `node` alone, no TypeScript
 * loader (issue: production should not compile at run time). Built here into .tmp/ (inside the
 * repository, so the compiled files resolve node_modules) with the same two steps as the script.
 */
const root = process.cwd();
mkdirSync(join(root, ".tmp"), { recursive: true });
const out = mkdtempSync(join(root, ".tmp", "build-"));
const dataDir = mkdtempSync(join(tmpdir(), "built-server-"));
afterAll(() => {
  rmSync(out, { recursive: true, force: true });
  rmSync(dataDir, { recursive: true, force: true });
});

function run(command: string, args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, env: { ...process.env } });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.once("exit", (code) => resolve({ code, output }));
  });
}

describe("npm run build", () => {
  it("compiles a server that runs on node without tsx: migrations, pages, their scripts, the API", async () => {
    const tsc = await run(join(root, "node_modules/.bin/tsc"), ["-p", "tsconfig.build.json", "--outDir", out]);
    expect(tsc.output).toBe("");
    expect(tsc.code).toBe(0);
    const copy = await run(process.execPath, ["scripts/copy-build-assets.mjs", relative(root, out)]);
    expect(copy.code).toBe(0);
    expect(existsSync(join(out, "schema/sqlite/0001_initial.sql"))).toBe(true);
    expect(existsSync(join(out, "server.js"))).toBe(true);

    const port = 40000 + Math.floor(Math.random() * 20000);
    const origin = `http://127.0.0.1:${port}`;
    // No --import tsx: plain node on the compiled files.
    const child = spawn(process.execPath, [join(out, "server.js")], {
      env: { PATH: process.env.PATH, DATA_DIR: dataDir, DATABASE_URL: join(dataDir, "built.sqlite"), PORT: String(port), HOST: "127.0.0.1", AUTH_URL: origin, BETTER_AUTH_SECRET: "b".repeat(40), LOG_LEVEL: "info" },
    });
    let log = "";
    child.stderr.on("data", (chunk: Buffer) => (log += chunk.toString("utf8")));
    child.stdout.on("data", (chunk: Buffer) => (log += chunk.toString("utf8")));
    try {
      for (let i = 0; i < 300 && !log.includes('"listening"') && child.exitCode === null; i++) await new Promise((r) => setTimeout(r, 100));
      expect(log).toContain('"listening"');
      const ready = await fetch(`${origin}/readyz`);
      expect(await ready.json()).toMatchObject({ status: "ready", checks: { database: "ok", migrations: "ok" } });

      const signUp = await fetch(`${origin}/api/auth/sign-up/email`, {
        method: "POST",
        headers: { "content-type": "application/json", origin },
        body: JSON.stringify({ name: "Built", email: `built-${Date.now()}@example.com`, password: "correct horse battery staple" }),
      });
      expect(signUp.status).toBe(200);

      // The sign-in page and the browser script it names (bundled from the copied sources).
      const page = await (await fetch(`${origin}/sign-in`)).text();
      const script = /src="(\/assets\/key-sign-in\.[^"]+\.js)"/.exec(page)?.[1];
      expect(script).toBeTruthy();
      const asset = await fetch(origin + script);
      expect(asset.status).toBe(200);
      expect((await asset.text()).length).toBeGreaterThan(1000);
    } finally {
      child.kill("SIGTERM");
      await new Promise((r) => (child.exitCode !== null ? r(null) : child.once("exit", r)));
    }
    expect(child.exitCode).toBe(0);
  }, 240_000);
});
