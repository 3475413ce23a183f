import { Hono, type Context } from "hono";
import * as v from "valibot";
import { isMemberKeyOf } from "../../lib/bap.js";
import { problem, problems } from "../../lib/errors.js";
import { check } from "../../lib/validate.js";
import { PROBLEM_CODES as CODES } from "../../lib/problem-codes.js";
import { BACKUP_SCOPES } from "../../plugins/backup/index.js";
import { BapId, noIdentity, notOwned, pushBackup, PushBackupInput } from "../../plugins/backup/service.js";
import * as store from "../../plugins/backup/store.js";
import { found, methodNotAllowed, queryOf, readBackupBody, sessionCaller, tokenOrSession, unauthorized, verifiedSigner, type BackupEnv } from "./access.js";
import { backupLinkOAuthRoutes } from "./link-oauth.js";
import { backupStatusRoutes } from "./status.js";
import { backupSyncRoutes } from "./sync.js";
import { limit, maybeSignedIn } from "../middleware.js";

/**
 * /api/backup: the caller's encrypted identity backup (spec, "Backup" and the per-route
 * authentication table), with its status, recovery links and the key-signed sync mounted below.
 */
export const BackupQuery = v.object({
  bapId: v.optional(BapId),
  oauthId: v.optional(v.pipe(v.string(), v.regex(/^[^|]{1,64}\|.{1,255}$/s, "must be provider|accountId"))),
});

type Ctx = Context<BackupEnv>;

/** GET /api/backup[?bapId | ?oauthId=provider|accountId] */
async function getBackup(c: Ctx) {
  const query = check(BackupQuery, queryOf(c), "query");
  if (query.bapId && query.oauthId) throw problems.badRequest("Name either bapId or oauthId, not both.");
  if (query.oauthId) return byRecoveryAccount(c, query.oauthId);
  if (query.bapId) return byIdentity(c, query.bapId);
  const session = sessionCaller(c);
  if (!session) throw unauthorized("Sign in first.");
  const identity = await store.findPrimaryIdentity(c.var.deps.db, session.userId);
  if (!identity) throw noIdentity();
  return c.json(found(await store.findBackup(c.var.deps.db, identity.bapId)));
}

/** Only the session that owns the linked provider account AND the identity it maps to. */
async function byRecoveryAccount(c: Ctx, oauthId: string) {
  const { db } = c.var.deps;
  const session = sessionCaller(c);
  if (!session) throw unauthorized("Sign in first.");
  const bar = oauthId.indexOf("|");
  const provider = oauthId.slice(0, bar);
  const accountId = oauthId.slice(bar + 1);
  if (!(await store.hasLinkedAccount(db, session.userId, provider, accountId))) {
    throw problem(CODES.ACCOUNT_NOT_LINKED);
  }
  const link = await store.findRecoveryLink(db, provider, accountId);
  if (!link) throw problem(CODES.BACKUP_NOT_FOUND, { detail: "No backup is mapped to that provider account." });
  if (!(await store.findOwnedIdentity(db, session.userId, link.bapId))) throw notOwned("The identity mapped to that provider account is not yours.");
  return c.json(found(await store.findBackup(db, link.bapId)));
}

/** An owning session, or a Bitcoin-Auth token (x-auth-token) by the identity's member key over the exact path with its query. */
async function byIdentity(c: Ctx, bapId: string) {
  const { db, signedReadLimiter } = c.var.deps;
  const session = sessionCaller(c);
  if (session && (await store.findOwnedIdentity(db, session.userId, bapId))) return c.json(found(await store.findBackup(db, bapId)));
  const token = c.req.header("x-auth-token");
  if (!token) {
    if (session) throw notOwned();
    throw unauthorized("Sign in, or sign the request with the identity's member key (x-auth-token).", "Bitcoin-Auth");
  }
  // Each signature check costs milliseconds of CPU: bounded per client IP.
  await limit(signedReadLimiter, c);
  const url = new URL(c.req.url);
  const signer = await verifiedSigner(c, token, url.pathname + url.search);
  if (!isMemberKeyOf(await store.findIdentity(db, bapId), bapId, signer)) throw notOwned("The token is not signed by this identity's member key.");
  return c.json(found(await store.findBackup(db, bapId)));
}

/** POST /api/backup {encryptedBackup}: the credential decides the identity; generation + 1. */
async function postBackup(c: Ctx) {
  const { body } = await readBackupBody(c, PushBackupInput);
  return c.json(await pushBackup(c.var.deps.db, c.var.caller, body));
}

/** The backup family (app.ts): /api/backup, no-store, its own body limit (BACKUP_MAX_BYTES); there is no DELETE route. */
export const backupRoutes = new Hono<BackupEnv>()
  .get("/", maybeSignedIn, getBackup)
  .post("/", tokenOrSession(BACKUP_SCOPES.write), postBackup)
  .all("/", methodNotAllowed("GET, POST"))
  .route("/status", backupStatusRoutes)
  .route("/link-oauth", backupLinkOAuthRoutes)
  .route("/sync", backupSyncRoutes);
