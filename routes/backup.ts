import { Hono, type Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { Kysely } from "kysely";
import * as v from "valibot";
import type { Auth } from "../auth.config.js";
import { CLIENT_IP_HEADER } from "../lib/transport.js";
import { findOAuthBearer, bearerTokenOf } from "./access-token.js";
import { bapIdOfMemberKey } from "../lib/bap.js";
import { verifyBitcoinAuthToken, type BitcoinAuthPolicy } from "../lib/bitcoin-auth.js";
import { problem, ProblemError, problems } from "../lib/errors.js";
import type { WindowLimiter } from "../lib/rate-limit.js";
import { problemResponse } from "../lib/respond.js";
import { findSession } from "./session.js";
import { check, readJson } from "../lib/validate.js";
import { PROBLEM_CODES as CODES } from "../lib/problem-codes.js";
import { BACKUP_SCOPES, type BackupScope } from "../plugins/backup/index.js";
import { BapId, backupStatus, Ciphertext, identityOf, noIdentity, notOwned, pushBackup, PushBackupInput, type BackupCaller } from "../plugins/backup/service.js";
import * as store from "../plugins/backup/store.js";

/**
 * Encrypted identity backups (spec, "Backup" and the per-route authentication table).
 * The server stores ciphertext and never decrypts it; nothing here logs a backup or a token.
 * There is no DELETE route.
 */
export interface BackupRouteDeps {
  auth: Auth;
  db: Kysely<any>;
  /** How Bitcoin-Auth tokens are verified: single-use records (Redis when configured), host binding. */
  bitcoinAuth: BitcoinAuthPolicy;
  /** 20 requests per minute per client IP on /sync; null turns the limit off. */
  syncLimiter: WindowLimiter | null;
  /** Per client IP on GET /api/backup?bapId with x-auth-token (a signature check each); null turns it off. */
  signedReadLimiter: WindowLimiter | null;
  /** Largest `encryptedBackup` accepted, in bytes (characters: the ciphertext is base64). */
  maxBackupBytes: number;
}

/** The public paths clients sign: the mount is part of what a Bitcoin-Auth token names. */
export const BACKUP_PATH = "/api/backup";
export const SYNC_PATH = `${BACKUP_PATH}/sync`;
/** Room for the JSON around the ciphertext. */
const ENVELOPE_BYTES = 16 * 1024;
const NO_STORE = { "cache-control": "no-store", pragma: "no-cache" };

const Provider = v.pipe(v.string(), v.regex(/^[a-z0-9][a-z0-9._-]{0,63}$/i, "must be a provider id"), v.notValue("credential", "must be a social provider"));
const AccountId = v.pipe(v.string(), v.minLength(1), v.maxLength(255), v.regex(/^[^\u0000-\u001f\u007f]+$/, "must not contain control characters"));

const BackupQuery = v.object({
  bapId: v.optional(BapId),
  oauthId: v.optional(v.pipe(v.string(), v.regex(/^[^|]{1,64}\|.{1,255}$/s, "must be provider|accountId"))),
});
const PostBackupBody = PushBackupInput;
const LinkOAuthBody = v.object({ provider: Provider, providerAccountId: AccountId });
const SyncQuery = v.object({ bapId: BapId });
const SyncBody = v.object({ bapId: BapId, encryptedBackup: Ciphertext });

/** Who is calling (plugins/backup/service.ts): a session or an OAuth token here. */
type Caller = BackupCaller;

const unauthorized = (detail: string, scheme = 'Bearer realm="backup"') => new ProblemError(401, detail, { headers: { "www-authenticate": scheme } });
const invalidBitcoinAuth = () => problem(CODES.INVALID_AUTH_TOKEN, { headers: { "www-authenticate": "Bitcoin-Auth" } });
const noBackup = () => problem(CODES.BACKUP_NOT_FOUND);

/** One value per query key: a repeated key is ambiguous, so it is refused. */
function queryOf(c: Context): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, values] of Object.entries(c.req.queries())) {
    if (values.length > 1) throw problems.badRequest(`The query names ${key} more than once.`, [{ pointer: `/${key}`, reason: "must appear once" }]);
    out[key] = values[0]!;
  }
  return out;
}

/** Parses a JSON body, answering 413 (not 400) when the ciphertext alone is over the limit. */
async function readBackupBody<const S extends v.GenericSchema>(c: Context, schema: S, maxBackupBytes: number) {
  const { value: json, raw } = await readJson(c, v.unknown(), maxBackupBytes + ENVELOPE_BYTES);
  const ciphertext = (json as { encryptedBackup?: unknown } | null)?.encryptedBackup;
  if (typeof ciphertext === "string" && ciphertext.length > maxBackupBytes) throw problems.tooLarge(`encryptedBackup is over the ${maxBackupBytes}-byte limit.`);
  return { raw, body: check(schema, json) };
}

export function backupRoutes({ auth, db, bitcoinAuth, syncLimiter, signedReadLimiter, maxBackupBytes }: BackupRouteDeps) {
  async function sessionCaller(headers: Headers): Promise<Caller | null> {
    const session = await findSession(auth, headers);
    return session ? { userId: session.user.id, referenceId: null, via: "session" } : null;
  }

  /** An active OAuth access token that carries `scope` (RFC 6750 §3.1: 403 insufficient_scope when it does not). */
  async function oauthCaller(headers: Headers, scope: BackupScope): Promise<Caller | null> {
    const bearer = await findOAuthBearer(auth, headers);
    if (!bearer) return null;
    if (!bearer.scopes.includes(scope)) throw problems.insufficientScope(scope);
    return { userId: bearer.userId, referenceId: bearer.referenceId, via: "oauth" };
  }

  /**
   * "supported OAuth access token or session": an OAuth bearer first (which must carry
   * `scope`), else better-auth's session (cookie or session-token bearer), which is the
   * person themselves and is not limited by scopes.
   */
  async function requireTokenOrSession(headers: Headers, scope: BackupScope): Promise<Caller> {
    const caller = (bearerTokenOf(headers) ? await oauthCaller(headers, scope) : null) ?? (await sessionCaller(headers));
    if (!caller) throw unauthorized("Send an OAuth access token or a session.");
    return caller;
  }

  /** The member key is the key at the identity's root path: its address derives the bapId. */
  function isMemberKeyOf(identity: store.BapIdentityRef | null, bapId: string, pubkey: string): boolean {
    return bapIdOfMemberKey(pubkey) === bapId || (identity?.memberPubkey != null && identity.memberPubkey === pubkey);
  }

  /** 429 past the limiter's budget for this client IP (OWASP ASVS 2.2.1, anti-automation). */
  async function limit(limiter: WindowLimiter | null, c: Context) {
    if (!limiter) return;
    const { allowed, retryAfter } = await limiter.hit(c.req.header(CLIENT_IP_HEADER) ?? "unknown");
    if (!allowed) throw problems.tooManyRequests(retryAfter);
  }

  async function verifiedSigner(token: string | null | undefined, requestPath: string, body?: string): Promise<string> {
    const result = await verifyBitcoinAuthToken(token, { requestPath, body }, bitcoinAuth);
    if (!result.ok) throw invalidBitcoinAuth();
    return result.pubkey;
  }

  function found(record: store.BackupRecord | null) {
    if (!record) throw noBackup();
    return { bapId: record.bapId, backup: record.backup, lastUpdated: record.lastUpdated, generation: record.generation };
  }

  const app = new Hono();
  app.use(bodyLimit({ maxSize: maxBackupBytes + ENVELOPE_BYTES, onError: () => problemResponse(problems.tooLarge(`The backup is over the ${maxBackupBytes}-byte limit.`)) }));

  // GET /api/backup[?bapId | ?oauthId=provider|accountId]
  app.get("/", async (c) => {
    const query = check(BackupQuery, queryOf(c), "query");
    const headers = c.req.raw.headers;
    if (query.bapId && query.oauthId) throw problems.badRequest("Name either bapId or oauthId, not both.");

    if (query.oauthId) {
      // Only the session that owns the linked provider account AND the identity it maps to.
      const session = await sessionCaller(headers);
      if (!session) throw unauthorized("Sign in first.");
      const bar = query.oauthId.indexOf("|");
      const provider = query.oauthId.slice(0, bar);
      const accountId = query.oauthId.slice(bar + 1);
      if (!(await store.hasLinkedAccount(db, session.userId, provider, accountId))) {
        throw problem(CODES.ACCOUNT_NOT_LINKED);
      }
      const link = await store.findRecoveryLink(db, provider, accountId);
      if (!link) throw problem(CODES.BACKUP_NOT_FOUND, { detail: "No backup is mapped to that provider account." });
      if (!(await store.findOwnedIdentity(db, session.userId, link.bapId))) throw notOwned("The identity mapped to that provider account is not yours.");
      return c.json(found(await store.findBackup(db, link.bapId)), 200, NO_STORE);
    }

    if (query.bapId) {
      // An owning session, or a Bitcoin-Auth token (x-auth-token) by the identity's member key
      // over the exact path with its query.
      const bapId = query.bapId;
      const session = await sessionCaller(headers);
      if (session && (await store.findOwnedIdentity(db, session.userId, bapId))) {
        return c.json(found(await store.findBackup(db, bapId)), 200, NO_STORE);
      }
      const token = c.req.header("x-auth-token");
      if (!token) {
        if (session) throw notOwned();
        throw unauthorized("Sign in, or sign the request with the identity's member key (x-auth-token).", "Bitcoin-Auth");
      }
      // Each signature check costs milliseconds of CPU: bounded per client IP.
      await limit(signedReadLimiter, c);
      const url = new URL(c.req.url);
      const signer = await verifiedSigner(token, url.pathname + url.search);
      if (!isMemberKeyOf(await store.findIdentity(db, bapId), bapId, signer)) throw notOwned("The token is not signed by this identity's member key.");
      return c.json(found(await store.findBackup(db, bapId)), 200, NO_STORE);
    }

    const session = await sessionCaller(headers);
    if (!session) throw unauthorized("Sign in first.");
    const identity = await store.findPrimaryIdentity(db, session.userId);
    if (!identity) throw noIdentity();
    return c.json(found(await store.findBackup(db, identity.bapId)), 200, NO_STORE);
  });

  // POST /api/backup {encryptedBackup}: the credential decides the identity; generation + 1.
  app.post("/", async (c) => {
    const caller = await requireTokenOrSession(c.req.raw.headers, BACKUP_SCOPES.write);
    const { body } = await readBackupBody(c, PostBackupBody, maxBackupBytes);
    return c.json(await pushBackup(db, caller, body), 200, NO_STORE);
  });

  // GET /api/backup/status
  app.get("/status", async (c) => {
    const caller = await requireTokenOrSession(c.req.raw.headers, BACKUP_SCOPES.read);
    return c.json(await backupStatus(db, caller), 200, NO_STORE);
  });

  // POST /api/backup/link-oauth {provider, providerAccountId}: OAuth bearer only (a cookie is not enough).
  app.post("/link-oauth", async (c) => {
    const caller = await oauthCaller(c.req.raw.headers, BACKUP_SCOPES.write);
    if (!caller) throw unauthorized("This route takes an OAuth access token (Authorization: Bearer); a session is not enough.");
    const { value: body } = await readJson(c, LinkOAuthBody);
    if (!(await store.hasLinkedAccount(db, caller.userId, body.provider, body.providerAccountId))) {
      throw problem(CODES.ACCOUNT_NOT_LINKED, { detail: "Sign in with that provider account first: it is not linked to your account." });
    }
    const identity = await identityOf(db, caller);
    if (!identity) throw noIdentity();
    const link = await store.linkRecoveryAccount(db, { provider: body.provider, accountId: body.providerAccountId, bapId: identity.bapId, userId: caller.userId });
    if (link.bapId !== identity.bapId) throw problem(CODES.OAUTH_ALREADY_LINKED);
    return c.json({ success: true, bapId: link.bapId, provider: link.provider, accountId: link.accountId, linkedAt: link.linkedAt }, 200, NO_STORE);
  });

  // /api/backup/sync: `Authorization: Bitcoin-Auth <token>` by the identity's member key over
  // the path /api/backup/sync (no query); POST binds the exact body too. 20/min per IP.
  app.use("/sync", async (c, next) => {
    await limit(syncLimiter, c);
    await next();
  });

  const syncToken = (c: Context) => /^Bitcoin-Auth +(\S+) *$/i.exec(c.req.header("authorization") ?? "")?.[1] ?? null;

  /**
   * The account a signer may sync `bapId` for: the registered profile's owner when the signer
   * is its member key, else an account whose own key is the identity's member key. Spec,
   * Errors 7: 404 when neither exists.
   */
  async function syncOwner(bapId: string, signer: string): Promise<string> {
    const identity = await store.findIdentity(db, bapId);
    if (identity) {
      if (!isMemberKeyOf(identity, bapId, signer)) throw notOwned("The token is not signed by this identity's member key.");
      return identity.userId;
    }
    const userId = bapIdOfMemberKey(signer) === bapId ? await store.findUserIdByPubkey(db, signer) : null;
    if (!userId) throw problem(CODES.PROFILE_NOT_FOUND);
    return userId;
  }

  app.get("/sync", async (c) => {
    const signer = await verifiedSigner(syncToken(c), SYNC_PATH);
    const { bapId } = check(SyncQuery, queryOf(c), "query");
    await syncOwner(bapId, signer);
    return c.json(found(await store.findBackup(db, bapId)), 200, NO_STORE);
  });

  app.post("/sync", async (c) => {
    const token = syncToken(c);
    if (!token) throw invalidBitcoinAuth();
    const { raw, body } = await readBackupBody(c, SyncBody, maxBackupBytes);
    const signer = await verifiedSigner(token, SYNC_PATH, raw);
    const userId = await syncOwner(body.bapId, signer);
    const generation = await store.syncBackup(db, { bapId: body.bapId, userId, backup: body.encryptedBackup });
    return c.json({ success: true, bapId: body.bapId, generation, message: "Backup synced." }, 200, NO_STORE);
  });

  // Spec: no public backup DELETE (or any other method) exists.
  for (const [path, allow] of [["/", "GET, POST"], ["/status", "GET"], ["/link-oauth", "POST"], ["/sync", "GET, POST"]] as const) {
    app.all(path, () => problemResponse(new ProblemError(405, "This method is not offered here.", { headers: { allow } })));
  }
  return app;
}
