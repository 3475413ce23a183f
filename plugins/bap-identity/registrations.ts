import type { Kysely } from "kysely";
import { parseJsonOrNull } from "../../lib/json.js";
import { isSuspended, listIdentities, type BapIdentity } from "./store.js";
import type { Database } from "../../lib/db/tables.js";

/**
 * The spec's "BAP identity registration record", as the owner sees it. Shared by
 * GET /api/user/bap-ids (routes/profile/shared.ts) and the agent capability `profile.read`
 * (plugins/agents): one query, one shape.
 * id, identity_key, root_address, current_address, identity, is_primary, plus stored metadata.
 */
export function registrationRecord(row: BapIdentity) {
  return {
    id: row.id,
    identity_key: row.bapId,
    root_address: row.rootAddress,
    current_address: row.currentAddress ?? row.rootAddress,
    identity: parseJsonOrNull(row.identity),
    is_primary: row.isPrimary,
    name: row.name,
    counter: row.counter,
    member_pubkey: row.memberPubkey,
    account_pubkey: row.accountPubkey,
    // Suspended: refused at key sign-in until the owner confirms it (POST /api/user/bap-ids/confirm).
    suspended: isSuspended(row),
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}
export type RegistrationRecord = ReturnType<typeof registrationRecord>;

/** The user's identities, primary first, then in the order they were registered. */
export async function listRegistrations(db: Kysely<Database>, userId: string): Promise<RegistrationRecord[]> {
  return (await listIdentities(db, userId)).map(registrationRecord);
}
