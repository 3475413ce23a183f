import type { BetterAuthPlugin } from "better-auth";
import { backupSchema } from "./schema.js";

/**
 * Encrypted identity backups: the tables only (`npm run db:migrate` creates them). The HTTP
 * surface is the Hono sub-app in routes/backup.ts, which reads and writes them through
 * ./store.ts.
 */
export function backup() {
  return {
    id: "bap-backup",
    schema: backupSchema,
  } satisfies BetterAuthPlugin;
}
