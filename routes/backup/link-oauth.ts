import { Hono, type Context } from "hono";
import * as v from "valibot";
import { problem } from "../../lib/errors.js";
import { readJson } from "../../lib/validate.js";
import { PROBLEM_CODES as CODES } from "../../lib/problem-codes.js";
import { BACKUP_SCOPES } from "../../plugins/backup/index.js";
import { identityOf, noIdentity } from "../../plugins/backup/service.js";
import * as store from "../../plugins/backup/store.js";
import { methodNotAllowed, oauthOnly, type BackupEnv } from "./access.js";

/**
 * POST /api/backup/link-oauth {provider, providerAccountId}: a provider account the caller has
 * signed in with becomes a way to recover the caller's identity's backup (GET /api/backup?oauthId).
 */
const Provider = v.pipe(v.string(), v.regex(/^[a-z0-9][a-z0-9._-]{0,63}$/i, "must be a provider id"), v.notValue("credential", "must be a social provider"));
const AccountId = v.pipe(v.string(), v.minLength(1), v.maxLength(255), v.regex(/^[^\u0000-\u001f\u007f]+$/, "must not contain control characters"));
export const LinkOAuthBody = v.object({ provider: Provider, providerAccountId: AccountId });

async function linkOAuth(c: Context<BackupEnv>) {
  const { db } = c.var.deps;
  const { caller } = c.var;
  const { value: body } = await readJson(c, LinkOAuthBody);
  if (!(await store.hasLinkedAccount(db, caller.userId, body.provider, body.providerAccountId))) {
    throw problem(CODES.ACCOUNT_NOT_LINKED, { detail: "Sign in with that provider account first: it is not linked to your account." });
  }
  const identity = await identityOf(db, caller);
  if (!identity) throw noIdentity();
  const link = await store.linkRecoveryAccount(db, { provider: body.provider, accountId: body.providerAccountId, bapId: identity.bapId, userId: caller.userId });
  if (link.bapId !== identity.bapId) throw problem(CODES.OAUTH_ALREADY_LINKED);
  return c.json({ success: true, bapId: link.bapId, provider: link.provider, accountId: link.accountId, linkedAt: link.linkedAt });
}

export const backupLinkOAuthRoutes = new Hono<BackupEnv>().post("/", oauthOnly(BACKUP_SCOPES.write), linkOAuth).all("/", methodNotAllowed("POST"));
