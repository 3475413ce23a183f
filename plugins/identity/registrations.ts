import type { Kysely } from "kysely";
import { asBool, asDate } from "../../lib/db.js";
import { parseJsonOrNull } from "../../lib/json.js";

/**
 * The spec's "BAP identity registration record", as the owner sees it. Shared by
 * GET /api/user/bap-ids (routes/profile.ts) and the agent capability `profile.read`
 * (plugins/agents): one query, one shape.
 */
export interface IdentityRow {
  id: string;
  userId: string;
  bapId: string;
  rootAddress: string;
  currentAddress: string | null;
  memberPubkey: string | null;
  identity: string | null;
  isPrimary: unknown;
  name: string | null;
  counter: number | null;
  accountPubkey: string | null;
  createdAt: unknown;
  updatedAt: unknown;
}

/** id, identity_key, root_address, current_address, identity, is_primary, plus stored metadata. */
export function registrationRecord(row: IdentityRow) {
  return {
    id: row.id,
    identity_key: row.bapId,
    root_address: row.rootAddress,
    current_address: row.currentAddress ?? row.rootAddress,
    identity: parseJsonOrNull(row.identity),
    is_primary: asBool(row.isPrimary),
    name: row.name,
    counter: row.counter,
    member_pubkey: row.memberPubkey,
    account_pubkey: row.accountPubkey,
    created_at: asDate(row.createdAt).toISOString(),
    updated_at: asDate(row.updatedAt).toISOString(),
  };
}
export type RegistrationRecord = ReturnType<typeof registrationRecord>;

/** The user's identities, primary first, then in the order they were registered. */
export async function listRegistrations(db: Kysely<any>, userId: string): Promise<RegistrationRecord[]> {
  const rows = (await db.selectFrom("bapIdentity").selectAll().where("userId", "=", userId).orderBy("isPrimary", "desc").orderBy("createdAt", "asc").execute()) as IdentityRow[];
  return rows.map(registrationRecord);
}
