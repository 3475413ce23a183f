import type { Context, MiddlewareHandler } from "hono";
import { createMiddleware } from "hono/factory";
import type { Kysely } from "kysely";
import * as v from "valibot";
import { verifyBitcoinAuthToken, type BitcoinAuthPolicy } from "../../lib/bitcoin-auth.js";
import { DpopRefusal, type DpopResourceGuard } from "../../lib/dpop.js";
import { problem, ProblemError, problems } from "../../lib/errors.js";
import type { Limiter } from "../../lib/rate-limit.js";
import { declaredBodyLimit } from "../../lib/request-body.js";
import { problemResponse } from "../../lib/respond.js";
import { check, readJson } from "../../lib/validate.js";
import { PROBLEM_CODES as CODES } from "../../lib/problem-codes.js";
import type { BackupScope } from "../../plugins/backup/index.js";
import type { BackupCaller } from "../../plugins/backup/service.js";
import type * as store from "../../plugins/backup/store.js";
import { findOAuthBearer, hasAccessToken } from "../access-token.js";
import type { RouteDeps, RouteEnv } from "../middleware.js";
import { findSession, type SessionWithUser } from "../session.js";
import type { Database } from "../../lib/db/tables.js";

/**
 * Encrypted identity backups (spec, "Backup" and the per-route authentication table): who may
 * call each backup route, and what the routes share. The server stores ciphertext and never
 * decrypts it; nothing here logs a backup or a token. There is no DELETE route.
 */
export interface BackupDeps extends RouteDeps {
  db: Kysely<Database>;
  /** How Bitcoin-Auth tokens are verified: single-use records (Redis when configured), host binding. */
  bitcoinAuth: BitcoinAuthPolicy;
  /** 20 requests per minute per client IP on /sync; null turns the limit off. */
  syncLimiter: Limiter | null;
  /** Per client IP on GET /api/backup?bapId with x-auth-token (a signature check each); null turns it off. */
  signedReadLimiter: Limiter | null;
  /** Largest `encryptedBackup` accepted, in bytes (characters: the ciphertext is base64). */
  maxBackupBytes: number;
  /** RFC 9449: the proof check for DPoP-bound OAuth tokens. */
  dpop: DpopResourceGuard;
}

/** `caller` is set by `tokenOrSession` and `oauthOnly`: a session or an OAuth token here. */
export type BackupEnv = RouteEnv<BackupDeps, { caller: BackupCaller }>;

/** The public paths clients sign: the mount is part of what a Bitcoin-Auth token names. */
export const BACKUP_PATH = "/api/backup";
export const SYNC_PATH = `${BACKUP_PATH}/sync`;
/** Room for the JSON around the ciphertext. */
const ENVELOPE_BYTES = 16 * 1024;

export const unauthorized = (detail: string, scheme = 'Bearer realm="backup"') => new ProblemError(401, detail, { headers: { "www-authenticate": scheme } });
export const invalidBitcoinAuth = () => problem(CODES.INVALID_AUTH_TOKEN, { headers: { "www-authenticate": "Bitcoin-Auth" } });
const noBackup = () => problem(CODES.BACKUP_NOT_FOUND);

/** The limit of each configured backup size (one, in a running server). */
const limitsBySize = new Map<number, MiddlewareHandler>();

/** The backup's limit, before anything reads the body. */
export const backupBodyLimit: MiddlewareHandler<BackupEnv> = (c, next) => {
  const { maxBackupBytes } = c.var.deps;
  let limit = limitsBySize.get(maxBackupBytes);
  if (!limit) {
    limit = declaredBodyLimit(maxBackupBytes + ENVELOPE_BYTES, () => problemResponse(problems.tooLarge(`The backup is over the ${maxBackupBytes}-byte limit.`)));
    limitsBySize.set(maxBackupBytes, limit);
  }
  return limit(c, next);
};

/** Spec: no public backup DELETE (or any other method) exists. */
export const methodNotAllowed = (allow: string) => () => problemResponse(new ProblemError(405, "This method is not offered here.", { headers: { allow } }));

/** One value per query key: a repeated key is ambiguous, so it is refused. */
export function queryOf(c: Context): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, values] of Object.entries(c.req.queries())) {
    if (values.length > 1) throw problems.badRequest(`The query names ${key} more than once.`, [{ pointer: `/${key}`, reason: "must appear once" }]);
    out[key] = values[0]!;
  }
  return out;
}

/** Parses a JSON body, answering 413 (not 400) when the ciphertext alone is over the limit. */
export async function readBackupBody<const S extends v.GenericSchema>(c: Context<BackupEnv>, schema: S) {
  const { maxBackupBytes } = c.var.deps;
  const { value: json, raw } = await readJson(c, v.unknown(), maxBackupBytes + ENVELOPE_BYTES);
  const ciphertext = (json as { encryptedBackup?: unknown } | null)?.encryptedBackup;
  if (typeof ciphertext === "string" && ciphertext.length > maxBackupBytes) throw problems.tooLarge(`encryptedBackup is over the ${maxBackupBytes}-byte limit.`);
  return { raw, body: check(schema, json) };
}

export function found(record: store.BackupRecord | null) {
  if (!record) throw noBackup();
  return { bapId: record.bapId, backup: record.backup, lastUpdated: record.lastUpdated, generation: record.generation };
}

/** A session is the person themselves, and is not limited by scopes. */
function callerOf(session: SessionWithUser | null | undefined): BackupCaller | null {
  return session ? { userId: session.user.id, referenceId: null, via: "session" } : null;
}

/** The caller `maybeSignedIn` found, if any. */
export const sessionCaller = (c: Context<BackupEnv>) => callerOf(c.get("session"));

/** An active OAuth access token that carries `scope` (RFC 6750 §3.1: 403 insufficient_scope when it does not). */
async function oauthCaller(c: Context<BackupEnv>, scope: BackupScope): Promise<BackupCaller | null> {
  let bearer;
  try {
    bearer = await findOAuthBearer(c.var.deps.auth, c.req.raw, c.var.deps.dpop);
  } catch (err) {
    // RFC 9449 §7.1: a bound token without its proof (or sent as Bearer) is a 401 with a DPoP challenge.
    if (err instanceof DpopRefusal) throw new ProblemError(401, err.description, { headers: err.headers() });
    throw err;
  }
  if (!bearer) return null;
  if (!bearer.scopes.includes(scope)) throw problems.insufficientScope(scope);
  return { userId: bearer.userId, referenceId: bearer.referenceId, via: "oauth" };
}

/**
 * "supported OAuth access token or session": an OAuth bearer first (which must carry
 * `scope`), else better-auth's session (cookie or session-token bearer).
 */
export const tokenOrSession = (scope: BackupScope) =>
  createMiddleware<BackupEnv>(async (c, next) => {
    const headers = c.req.raw.headers;
    const caller = (hasAccessToken(headers) ? await oauthCaller(c, scope) : null) ?? callerOf(await findSession(c.var.deps.auth, headers));
    if (!caller) throw unauthorized("Send an OAuth access token or a session.");
    c.set("caller", caller);
    await next();
  });

/** An OAuth bearer carrying `scope` only (a cookie is not enough). */
export const oauthOnly = (scope: BackupScope) =>
  createMiddleware<BackupEnv>(async (c, next) => {
    const caller = await oauthCaller(c, scope);
    if (!caller) throw unauthorized("This route takes an OAuth access token (Authorization: Bearer, or DPoP with its proof); a session is not enough.");
    c.set("caller", caller);
    await next();
  });

/** The key that signed a Bitcoin-Auth token for this request, or a 401. */
export async function verifiedSigner(c: Context<BackupEnv>, token: string | null | undefined, requestPath: string, body?: string): Promise<string> {
  const result = await verifyBitcoinAuthToken(token, { requestPath, body }, c.var.deps.bitcoinAuth);
  if (!result.ok) throw invalidBitcoinAuth();
  return result.pubkey;
}

