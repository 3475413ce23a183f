import { Hono, type Context } from "hono";
import { BACKUP_SCOPES } from "../../plugins/backup/index.js";
import { backupStatus } from "../../plugins/backup/service.js";
import { methodNotAllowed, tokenOrSession, type BackupEnv } from "./access.js";

/** GET /api/backup/status: whether the caller's identity has a backup, and its recovery links. */
async function getStatus(c: Context<BackupEnv>) {
  return c.json(await backupStatus(c.var.deps.db, c.var.caller));
}

export const backupStatusRoutes = new Hono<BackupEnv>().get("/", tokenOrSession(BACKUP_SCOPES.read), getStatus).all("/", methodNotAllowed("GET"));
