import { execFile, spawn } from "node:child_process";
import { cpSync, existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { ConfigError, loadEnv } from "../../lib/env.js";
import { start } from "../../server.js";
import { useTempDirs } from "../helpers/fixtures.js";

const run = promisify(execFile);
/** Temporary directories, removed after the file's tests. */
const tempDir = useTempDirs("idp-startup-");

describe("settings", () => {
  it("defaults to SQLite under ./data, port 3000 and the issuer http://localhost:3000", () => {
    const dir = tempDir();
    const config = loadEnv({ DATA_DIR: dir });
    expect(config.port).toBe(3000);
    expect(config.authUrl).toBe("http://localhost:3000");
    expect(config.database.kind).toBe("sqlite");
    expect(config.ttl).toEqual({ accessToken: 3600, refreshToken: 604800, code: 600, idToken: 3600, refreshReuseGrace: 0 });
  });

  it("generates a development secret once, keeps it private in the data directory, and warns", () => {
    const dir = tempDir();
    const first = loadEnv({ DATA_DIR: dir });
    const second = loadEnv({ DATA_DIR: dir });
    expect(first.secret).toBe(second.secret);
    expect(first.secret.length).toBeGreaterThanOrEqual(32);
    expect(readFileSync(join(dir, "dev-secret"), "utf8").trim()).toBe(first.secret);
    expect(statSync(join(dir, "dev-secret")).mode & 0o077).toBe(0);
    expect(first.warnings.join(" ")).toMatch(/BETTER_AUTH_SECRET/);
  });

  it("refuses to run in production without a secret or with a non-https AUTH_URL", () => {
    const dir = tempDir();
    expect(() => loadEnv({ NODE_ENV: "production", DATA_DIR: dir, AUTH_URL: "https://id.example.com" })).toThrow(/BETTER_AUTH_SECRET/);
    expect(() => loadEnv({ NODE_ENV: "production", DATA_DIR: dir, BETTER_AUTH_SECRET: "s".repeat(40), AUTH_URL: "http://id.example.com" })).toThrow(/https/);
    expect(existsSync(join(dir, "dev-secret"))).toBe(false);
    const ok = loadEnv({ NODE_ENV: "production", DATA_DIR: dir, BETTER_AUTH_SECRET: "s".repeat(40), AUTH_URL: "https://id.example.com/", SMTP_URL: "smtp://mail.example.com:587", SERVER_IDENTITY_KEY: "11".repeat(32) });
    expect(ok.authUrl).toBe("https://id.example.com");
    expect(ok.warnings).toEqual([]);
  });

  it("names the offending key in validation errors", () => {
    expect(() => loadEnv({ PORT: "eighty" })).toThrow(ConfigError);
    expect(() => loadEnv({ PORT: "eighty" })).toThrow(/PORT/);
    expect(() => loadEnv({ AUTH_URL: "not a url" })).toThrow(/AUTH_URL/);
    expect(() => loadEnv({ AUTH_URL: "https://id.example.com/idp?tenant=1" })).toThrow(/AUTH_URL/);
    expect(() => loadEnv({ AUTH_URL: "https://id.example.com/idp#x" })).toThrow(/AUTH_URL/);
    expect(() => loadEnv({ AUTH_URL: "ftp://id.example.com" })).toThrow(/AUTH_URL/);
    expect(() => loadEnv({ BETTER_AUTH_SECRET: "short" })).toThrow(/BETTER_AUTH_SECRET/);
    expect(() => loadEnv({ REDIS_URL: "http://localhost" })).toThrow(/REDIS_URL/);
    expect(() => loadEnv({ LOG_LEVEL: "loud" })).toThrow(/LOG_LEVEL/);
  });

  it("takes an AUTH_URL with a path as the issuer, exactly as written but for a trailing slash", () => {
    const dir = tempDir();
    expect(loadEnv({ DATA_DIR: dir, AUTH_URL: "https://id.example.com/idp/" }).authUrl).toBe("https://id.example.com/idp");
    expect(loadEnv({ DATA_DIR: dir, AUTH_URL: "https://id.example.com/" }).authUrl).toBe("https://id.example.com");
  });

  it("reads DATABASE_URL as a SQLite path, a file: URL or a postgres URL", () => {
    const dir = tempDir();
    expect(loadEnv({ DATA_DIR: dir, DATABASE_URL: "file:/tmp/x.sqlite" }).database).toEqual({ kind: "sqlite", file: "/tmp/x.sqlite" });
    expect(loadEnv({ DATA_DIR: dir, DATABASE_URL: "/tmp/y.db" }).database).toEqual({ kind: "sqlite", file: "/tmp/y.db" });
    const pgUrl = "postgres://u@127.0.0.1:5432/db";
    const config = loadEnv({ DATA_DIR: dir, DATABASE_URL: pgUrl });
    expect(config.database).toEqual({ kind: "postgres", url: pgUrl });
    expect(config.autoMigrate).toBe(false);
    expect(loadEnv({ DATA_DIR: dir, DATABASE_URL: pgUrl, AUTO_MIGRATE: "true" }).autoMigrate).toBe(true);
  });
});

describe("mail settings", () => {
  const production = () => ({ NODE_ENV: "production", DATA_DIR: tempDir(), BETTER_AUTH_SECRET: "s".repeat(40), AUTH_URL: "https://id.example.com" });

  it("refuses to run in production without SMTP_URL, naming it, unless MAIL_DISABLED=true says so (and warns)", () => {
    expect(() => loadEnv(production())).toThrow(ConfigError);
    expect(() => loadEnv(production())).toThrow(/SMTP_URL.*MAIL_DISABLED/);
    const off = loadEnv({ ...production(), MAIL_DISABLED: "true" });
    expect(off.mailDisabled).toBe(true);
    expect(off.warnings.join(" ")).toMatch(/MAIL_DISABLED=true: no e-mail is sent/);
    expect(() => loadEnv({ ...production(), MAIL_DISABLED: "true", REQUIRE_EMAIL_VERIFICATION: "true" })).toThrow(/REQUIRE_EMAIL_VERIFICATION/);
  });

  /** server.ts in a child process; its log (stderr) after a password reset was asked for. */
  async function logOfPasswordReset(env: Record<string, string>): Promise<string> {
    const tsx = join(process.cwd(), "node_modules/.bin/tsx");
    const port = 40000 + Math.floor(Math.random() * 20000);
    const origin = env.AUTH_URL ?? `http://127.0.0.1:${port}`;
    const dir = tempDir();
    const child = spawn(tsx, ["server.ts"], {
      env: { PATH: process.env.PATH, DATA_DIR: dir, DATABASE_URL: join(dir, "m.sqlite"), PORT: String(port), HOST: "127.0.0.1", AUTH_URL: origin, BETTER_AUTH_SECRET: "s".repeat(40), ...env },
    });
    let log = "";
    child.stderr.on("data", (chunk: Buffer) => (log += chunk.toString("utf8")));
    try {
      for (let i = 0; i < 200 && !log.includes('"listening"'); i++) await new Promise((r) => setTimeout(r, 100));
      expect(log).toContain('"listening"');
      const post = (path: string, body: unknown) =>
        fetch(`http://127.0.0.1:${port}/api/auth${path}`, { method: "POST", headers: { "content-type": "application/json", origin }, body: JSON.stringify(body) });
      const email = `mail-${process.pid}-${Date.now()}@example.com`;
      expect((await post("/sign-up/email", { name: "Mail", email, password: "correct horse battery staple" })).status).toBe(200);
      expect((await post("/request-password-reset", { email, redirectTo: "/reset-password" })).status).toBe(200);
      await new Promise((r) => setTimeout(r, 300));
      return log;
    } finally {
      child.kill("SIGTERM");
      await new Promise((r) => child.once("exit", r));
    }
  }

  it("MAIL_DISABLED=true in production: warns at start that mail is off and never logs a link", async () => {
    const log = await logOfPasswordReset({ NODE_ENV: "production", MAIL_DISABLED: "true", LOG_LEVEL: "debug", AUTH_URL: "https://localhost:1" });
    expect(log).toMatch(/"level":"warn",.*"msg":"WARNING: MAIL_DISABLED=true: no e-mail is sent/);
    expect(log).toMatch(/mail not sent \(MAIL_DISABLED=true\)/);
    expect(log).not.toMatch(/reset-password\//);
    expect(log).not.toMatch(/token=/);
    // A production start says only what an operator must act on (here: the settings this test
    // leaves weak or unset), nothing about how arrays are encoded (better-auth's planner notes
    // one per array field on SQLite).
    const warnings = log
      .split("\n")
      .filter((line) => line.includes('"level":"warn"'))
      .map((line) => String(JSON.parse(line).msg));
    expect(warnings.filter((w) => !/MAIL_DISABLED|SERVER_IDENTITY_KEY|MINT_SERVICE_URL|BETTER_AUTH_SECRET/.test(w))).toEqual([]);
  }, 30_000);

  it("without SMTP_URL while developing, links reach the log at debug level only", async () => {
    const info = await logOfPasswordReset({ NODE_ENV: "development", LOG_LEVEL: "info" });
    expect(info).not.toMatch(/reset-password\//);
    const debug = await logOfPasswordReset({ NODE_ENV: "development", LOG_LEVEL: "debug" });
    expect(debug).toMatch(/"level":"debug",.*reset-password\/.*"msg":"mail \(SMTP_URL not set, not sent\)"/);
  }, 60_000);
});

describe("schema scripts", () => {
  const tsx = join(process.cwd(), "node_modules/.bin/tsx");
  it("db:migrate applies schema/sqlite to a new database, records it, and is idempotent; db:generate finds nothing to write", async () => {
    const dir = tempDir();
    const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dir, DATABASE_URL: join(dir, "s.sqlite"), LOG_LEVEL: "error" };
    delete env.REDIS_URL;
    expect((await run(tsx, ["scripts/db-migrate.ts"], { env })).stdout).toMatch(/applied \d+ migration\(s\): 0001_initial/);
    expect((await run(tsx, ["scripts/db-migrate.ts"], { env })).stdout).toMatch(/up to date/);
    // A copy of schema/, so that drift in a working tree never writes into the real folder from a test.
    const copy = join(dir, "schema");
    cpSync(join(process.cwd(), "schema"), copy, { recursive: true });
    const generated = await run(tsx, ["scripts/db-generate.ts", "--dialect", "sqlite", "--dir", copy], { env });
    expect(generated.stdout).toBe("");
    expect(generated.stderr).toMatch(/sqlite: schema is up to date/);
  });
});

const pgUrl = process.env.TEST_DATABASE_URL;
describe.runIf(Boolean(pgUrl))("PostgreSQL start-up", () => {
  it("refuses to start on a database whose schema is behind, unless AUTO_MIGRATE=true", async () => {
    const name = `idp_empty_${process.pid}_${Date.now()}`;
    const admin = new pg.Client({ connectionString: pgUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    const url = new URL(pgUrl!);
    url.pathname = `/${name}`;
    const base = { DATA_DIR: tempDir(), DATABASE_URL: url.toString(), BETTER_AUTH_SECRET: "s".repeat(40), PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "silent" };
    try {
      await expect(start(loadEnv(base))).rejects.toThrow(/schema is behind.*db:migrate/s);
      const running = await start(loadEnv({ ...base, AUTO_MIGRATE: "true" }));
      const res = await fetch(`http://127.0.0.1:${running.port}/.well-known/openid-configuration`);
      expect(res.status).toBe(200);
      await running.close();
      // Migrated now: a plain start works.
      const again = await start(loadEnv(base));
      await again.close();
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    }
  });
});
