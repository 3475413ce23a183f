import type { Kysely } from "kysely";
import { asBool, asDate } from "../../lib/db/sqlite-values.js";
import type { Database } from "../../lib/db/tables.js";

/**
 * better-auth's `passkey` table as our code reads it outside a better-auth request (its one
 * owner here; adapter.ts is the same inside one). Registering and deleting passkeys go through
 * the passkey plugin's endpoints.
 */

export interface PasskeyRow {
  id: string;
  name: string | null;
  deviceType: string;
  backedUp: boolean;
  createdAt: Date | null;
}

/** A person's passkeys, oldest first (the account page). */
export async function listPasskeys(db: Kysely<Database>, userId: string): Promise<PasskeyRow[]> {
  const rows = await db.selectFrom("passkey").select(["id", "name", "deviceType", "backedUp", "createdAt"]).where("userId", "=", userId).orderBy("createdAt", "asc").execute();
  return rows.map((r) => ({ id: r.id, name: r.name ?? null, deviceType: r.deviceType, backedUp: asBool(r.backedUp), createdAt: r.createdAt ? asDate(r.createdAt) : null }));
}
