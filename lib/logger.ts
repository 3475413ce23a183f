import { AsyncLocalStorage } from "node:async_hooks";
import { pino, stdSerializers, stdTimeFunctions, type DestinationStream } from "pino";

/**
 * Structured JSON logs (pino), one line per event on standard error:
 * `{"level":"info","time":"<ISO 8601>","requestId":"...",...fields,"msg":"..."}`.
 * Every line written while a request is handled carries its `requestId` (the X-Request-Id the
 * answer carries; app.ts runs each request inside `requestContext`). Fields that hold
 * credentials are censored by name wherever they sit (REDACTED below), so a caller that logs
 * a whole body or header set leaks nothing; code never logs secrets on purpose either.
 */
export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** The request a piece of work belongs to, for the log lines it writes. */
export const requestContext = new AsyncLocalStorage<{ requestId: string }>();

/**
 * Names whose values are credentials or private data, censored at any depth up to three
 * (`args.0.password`, better-auth's log arguments, included). Not `code`: errors carry theirs
 * (ECONNREFUSED), and authorization codes travel in URLs, which are never logged with a query.
 */
const SECRET_NAMES = [
  "password",
  "newPassword",
  "currentPassword",
  "token",
  "accessToken",
  "refreshToken",
  "idToken",
  "access_token",
  "refresh_token",
  "id_token",
  "code_verifier",
  "client_secret",
  "clientSecret",
  "secret",
  "authorization",
  "cookie",
  "set-cookie",
  "x-auth-token",
  "registration_access_token",
  "wif",
  "privateKey",
  "encryptedBackup",
  "backup",
  "otp",
  "totpURI",
  "backupCodes",
];
const REDACTED = SECRET_NAMES.flatMap((name) => {
  const key = /^[A-Za-z_$][\w$]*$/.test(name) ? name : `["${name}"]`;
  const at = (prefix: string) => (key.startsWith("[") ? `${prefix}${key}` : `${prefix}.${key}`);
  return [key, at("*"), at("*.*")];
});

export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
  const log = pino(
    {
      level,
      base: null,
      timestamp: stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      mixin: () => {
        const context = requestContext.getStore();
        return context ? { requestId: context.requestId } : {};
      },
      serializers: { err: stdSerializers.err },
      redact: { paths: REDACTED, censor: "[redacted]" },
    },
    // Synchronous: a line is written before the call returns, so nothing is lost at exit.
    destination ?? pino.destination({ dest: 2, sync: true }),
  );
  const write = (lvl: Exclude<LogLevel, "silent">) => (message: string, fields?: Record<string, unknown>) => {
    if (fields) log[lvl](fields, message);
    else log[lvl](message);
  };
  return { debug: write("debug"), info: write("info"), warn: write("warn"), error: write("error") };
}
