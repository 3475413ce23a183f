import { Hono, type Context } from "hono";
import { createMiddleware } from "hono/factory";
import * as v from "valibot";
import { bapIdOfMemberKey, isMemberKeyOf } from "../../lib/bap.js";
import { problem } from "../../lib/errors.js";
import { check } from "../../lib/validate.js";
import { PROBLEM_CODES as CODES } from "../../lib/problem-codes.js";
import { BapId, Ciphertext, notOwned } from "../../plugins/backup/service.js";
import * as store from "../../plugins/backup/store.js";
import { found, invalidBitcoinAuth, methodNotAllowed, queryOf, readBackupBody, SYNC_PATH, verifiedSigner, type BackupEnv } from "./access.js";
import { limit } from "../middleware.js";

/**
 * /api/backup/sync: a Bitcoin-Auth token by the identity's member key over the path
 * /api/backup/sync (no query), in `Authorization: Bitcoin-Auth <token>` or in `x-auth-token`
 * (spec, Authentication: the scheme table names both); POST binds the exact body too. 20/min per IP.
 */
export const SyncQuery = v.object({ bapId: BapId });
export const SyncBody = v.object({ bapId: BapId, encryptedBackup: Ciphertext });

type Ctx = Context<BackupEnv>;

const syncRateLimit = createMiddleware<BackupEnv>(async (c, next) => {
  await limit(c.var.deps.syncLimiter, c);
  await next();
});

/**
 * The sync proof, from either header. Two different tokens make the request ambiguous: it is
 * refused rather than one of them picked.
 */
function syncToken(c: Ctx): string | null {
  const inAuthorization = /^Bitcoin-Auth +(\S+) *$/i.exec(c.req.header("authorization") ?? "")?.[1];
  const inHeader = c.req.header("x-auth-token")?.trim() || undefined;
  if (inAuthorization && inHeader && inAuthorization !== inHeader) throw invalidBitcoinAuth();
  return inAuthorization ?? inHeader ?? null;
}

/**
 * The account a signer may sync `bapId` for: the registered profile's owner when the signer
 * is its member key, else an account whose own key is the identity's member key. Spec,
 * Errors 7: 404 when neither exists.
 */
async function syncOwner(c: Ctx, bapId: string, signer: string): Promise<string> {
  const { db } = c.var.deps;
  const identity = await store.findIdentity(db, bapId);
  if (identity) {
    if (!isMemberKeyOf(identity, bapId, signer)) throw notOwned("The token is not signed by this identity's member key.");
    return identity.userId;
  }
  const userId = bapIdOfMemberKey(signer) === bapId ? await store.findUserIdByPubkey(db, signer) : null;
  if (!userId) throw problem(CODES.PROFILE_NOT_FOUND);
  return userId;
}

async function pullBackup(c: Ctx) {
  const signer = await verifiedSigner(c, syncToken(c), SYNC_PATH);
  const { bapId } = check(SyncQuery, queryOf(c), "query");
  await syncOwner(c, bapId, signer);
  const record = found(await store.findBackup(c.var.deps.db, bapId));
  // The published Sigma client's pullBackup reads `encryptedBackup`; `backup` as on GET /api/backup.
  return c.json({ ...record, encryptedBackup: record.backup });
}

async function syncBackup(c: Ctx) {
  const token = syncToken(c);
  if (!token) throw invalidBitcoinAuth();
  const { raw, body } = await readBackupBody(c, SyncBody);
  const signer = await verifiedSigner(c, token, SYNC_PATH, raw);
  const userId = await syncOwner(c, body.bapId, signer);
  const generation = await store.syncBackup(c.var.deps.db, { bapId: body.bapId, userId, backup: body.encryptedBackup });
  return c.json({ success: true, bapId: body.bapId, generation, message: "Backup synced." });
}

export const backupSyncRoutes = new Hono<BackupEnv>().use(syncRateLimit).get("/", pullBackup).post("/", syncBackup).all("/", methodNotAllowed("GET, POST"));
