import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import * as v from "valibot";
import { parseSocialSettings, type SocialSettings } from "./social-env.js";

/**
 * Every setting the service reads, validated once at start-up. Nothing else in the
 * project reads `process.env`: the frozen `Config` is passed down through factories.
 * `.env.example` documents each key with its default.
 */
const Bool = v.pipe(
  v.optional(v.picklist(["true", "false", "1", "0", ""]), ""),
  v.transform((s) => s === "true" || s === "1"),
);
const Seconds = (fallback: number) =>
  v.pipe(
    v.optional(v.string(), String(fallback)),
    v.transform(Number),
    v.integer("must be a whole number of seconds"),
    v.minValue(1, "must be at least 1"),
  );

const EnvSchema = v.object({
  NODE_ENV: v.optional(v.picklist(["development", "production", "test"]), "development"),
  PORT: v.pipe(v.optional(v.string(), "3000"), v.transform(Number), v.integer(), v.minValue(0), v.maxValue(65535)),
  HOST: v.optional(v.string(), "0.0.0.0"),
  AUTH_URL: v.optional(v.pipe(v.string(), v.url("must be an absolute URL"))),
  DATABASE_URL: v.optional(v.string(), "./data/idp.sqlite"),
  BETTER_AUTH_SECRET: v.optional(v.pipe(v.string(), v.minLength(32, "must be at least 32 characters"))),
  REDIS_URL: v.optional(v.pipe(v.string(), v.regex(/^rediss?:\/\//, "must be a redis:// or rediss:// URL"))),
  LOG_LEVEL: v.optional(v.picklist(["debug", "info", "warn", "error", "silent"]), "info"),
  AUTO_MIGRATE: v.optional(v.picklist(["true", "false", ""]), ""),
  SMTP_URL: v.optional(v.string()),
  MAIL_FROM: v.optional(v.string(), "Identity <no-reply@localhost>"),
  REQUIRE_EMAIL_VERIFICATION: Bool,
  TRUST_PROXY: Bool,
  DATA_DIR: v.optional(v.string(), "./data"),
  ACCESS_TOKEN_TTL: Seconds(3600),
  REFRESH_TOKEN_TTL: Seconds(604800),
  AUTH_CODE_TTL: Seconds(600),
  ID_TOKEN_TTL: Seconds(3600),
  REGISTER_RATE_LIMIT: v.pipe(v.optional(v.string(), "20"), v.transform(Number), v.integer(), v.minValue(1)),
  RATE_LIMIT_ENABLED: v.optional(v.picklist(["true", "false", ""]), ""),
  SIGMA_SERVICE_NAME: v.optional(v.pipe(v.string(), v.regex(/^[a-z0-9-]+$/)), "sigma"),
  BACKUP_MAX_BYTES: v.pipe(v.optional(v.string(), String(5 * 1024 * 1024)), v.transform(Number), v.integer("must be a whole number of bytes"), v.minValue(1024), v.maxValue(64 * 1024 * 1024)),
  DEVICE_CODE_TTL: Seconds(600),
  DEVICE_POLL_INTERVAL: Seconds(5),
  DEVICE_CODE_RATE_LIMIT: v.pipe(v.optional(v.string(), "10"), v.transform(Number), v.integer(), v.minValue(1)),
  AGENT_DYNAMIC_HOSTS: Bool,
});

export type DatabaseTarget =
  | { kind: "sqlite"; file: string }
  | { kind: "postgres"; url: string };

export interface Config {
  readonly env: "development" | "production" | "test";
  readonly port: number;
  readonly host: string;
  /** Public origin; also the OAuth/OIDC issuer, exactly as written (no trailing slash). */
  readonly authUrl: string;
  readonly database: DatabaseTarget;
  readonly secret: string;
  readonly redisUrl: string | undefined;
  readonly logLevel: "debug" | "info" | "warn" | "error" | "silent";
  /** Apply pending schema changes at start-up (always on for SQLite). */
  readonly autoMigrate: boolean;
  readonly smtpUrl: string | undefined;
  readonly mailFrom: string;
  readonly requireEmailVerification: boolean;
  readonly trustProxy: boolean;
  readonly dataDir: string;
  readonly ttl: { readonly accessToken: number; readonly refreshToken: number; readonly code: number; readonly idToken: number };
  readonly registerRateLimit: number;
  readonly rateLimitEnabled: boolean;
  readonly sigmaServiceName: string;
  /** Largest encrypted backup stored (POST /api/backup, /api/backup/sync), in bytes. */
  readonly backupMaxBytes: number;
  /** RFC 8628 device grant: code lifetime and minimum polling interval (s), user-code checks per IP per minute. */
  readonly device: { readonly codeTtl: number; readonly pollInterval: number; readonly userCodeRateLimit: number };
  /** Agent auth: let unknown hosts register themselves (needed for autonomous agents). */
  readonly agents: { readonly dynamicHosts: boolean };
  /** Social sign-in: built-in providers with both credentials set, and generic OIDC providers. */
  readonly social: SocialSettings;
  /** Messages for the operator, printed loudly at start-up. */
  readonly warnings: readonly string[];
}

export class ConfigError extends Error {
  override name = "ConfigError";
}

function parseDatabase(url: string, dataDir: string): DatabaseTarget {
  if (/^postgres(ql)?:\/\//.test(url)) return { kind: "postgres", url };
  if (url.startsWith("file:")) url = url.slice("file:".length).replace(/^\/\/(?=\/)/, "");
  if (url === ":memory:") return { kind: "sqlite", file: url };
  if (!url) url = resolve(dataDir, "idp.sqlite");
  return { kind: "sqlite", file: resolve(url) };
}

/** A development secret is generated once and kept in the data directory. */
function developmentSecret(dataDir: string): string {
  const file = resolve(dataDir, "dev-secret");
  if (existsSync(file)) return readFileSync(file, "utf8").trim();
  mkdirSync(dirname(file), { recursive: true });
  const secret = randomBytes(32).toString("base64url");
  writeFileSync(file, secret + "\n", { mode: 0o600 });
  return secret;
}

export function loadEnv(source: Record<string, string | undefined> = process.env): Config {
  const raw = Object.fromEntries(Object.entries(source).filter(([, value]) => value !== undefined && value !== ""));
  const parsed = v.safeParse(EnvSchema, raw);
  const social = parseSocialSettings(raw);
  if (!parsed.success || social.issues.length) {
    const lines = (parsed.issues ?? []).map((issue) => `  ${v.getDotPath(issue) ?? "?"}: ${issue.message}`);
    throw new ConfigError(`Invalid settings:\n${[...lines, ...social.issues].join("\n")}`);
  }
  const e = parsed.output;
  const warnings: string[] = [...social.warnings];
  const production = e.NODE_ENV === "production";
  const authUrl = (e.AUTH_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, "");
  const url = new URL(authUrl);
  if (url.pathname !== "/" || url.search || url.hash) throw new ConfigError("AUTH_URL: must be an origin without path, query or fragment");

  let secret = e.BETTER_AUTH_SECRET;
  if (production) {
    if (!secret) throw new ConfigError("BETTER_AUTH_SECRET: required when NODE_ENV=production");
    if (url.protocol !== "https:") throw new ConfigError("AUTH_URL: must be https when NODE_ENV=production");
  }
  if (!secret) {
    secret = developmentSecret(e.DATA_DIR);
    warnings.push(
      `BETTER_AUTH_SECRET is not set: using a development secret kept in ${resolve(e.DATA_DIR, "dev-secret")}. ` +
        "Never run like this in production.",
    );
  }
  // The passkey RP ID is AUTH_URL's host name, and browsers refuse WebAuthn for an IP-address RP ID
  // (Chromium: "This is an invalid domain"), so passkeys need a domain name.
  if (/^\[|^\d+\.\d+\.\d+\.\d+$/.test(url.hostname)) {
    warnings.push(`AUTH_URL's host ${url.hostname} is an IP address: browsers refuse passkeys there. Use a domain name (http://localhost while developing).`);
  }
  const database = parseDatabase(e.DATABASE_URL, e.DATA_DIR);
  return Object.freeze({
    env: e.NODE_ENV,
    port: e.PORT,
    host: e.HOST,
    authUrl,
    database,
    secret,
    redisUrl: e.REDIS_URL,
    logLevel: e.LOG_LEVEL,
    autoMigrate: database.kind === "sqlite" || e.AUTO_MIGRATE === "true",
    smtpUrl: e.SMTP_URL,
    mailFrom: e.MAIL_FROM,
    requireEmailVerification: e.REQUIRE_EMAIL_VERIFICATION,
    trustProxy: e.TRUST_PROXY,
    dataDir: e.DATA_DIR,
    ttl: Object.freeze({
      accessToken: e.ACCESS_TOKEN_TTL,
      refreshToken: e.REFRESH_TOKEN_TTL,
      code: e.AUTH_CODE_TTL,
      idToken: e.ID_TOKEN_TTL,
    }),
    registerRateLimit: e.REGISTER_RATE_LIMIT,
    rateLimitEnabled: e.RATE_LIMIT_ENABLED !== "false",
    sigmaServiceName: e.SIGMA_SERVICE_NAME,
    backupMaxBytes: e.BACKUP_MAX_BYTES,
    device: Object.freeze({ codeTtl: e.DEVICE_CODE_TTL, pollInterval: e.DEVICE_POLL_INTERVAL, userCodeRateLimit: e.DEVICE_CODE_RATE_LIMIT }),
    agents: Object.freeze({ dynamicHosts: e.AGENT_DYNAMIC_HOSTS }),
    social: social.social,
    warnings: Object.freeze(warnings),
  });
}
