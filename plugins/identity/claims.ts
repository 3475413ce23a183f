import type { Kysely } from "kysely";
import { parseJsonOrNull } from "../../lib/json.js";

/** The claims a selected BAP profile contributes to ID tokens and userinfo. */
export interface BapClaims {
  bap_id: string;
  /** JSON string: id, rootAddress, currentAddress, identity (what the Sigma client reads). */
  bap: string;
}

interface BapIdentityRow {
  bapId: string;
  rootAddress: string;
  currentAddress: string | null;
  identity: string | null;
}


/**
 * The profile a token speaks for: the one selected at authorization (the consent and
 * token `referenceId`) when it belongs to the user, else the user's primary profile.
 */
export async function findSelectedBapIdentity(db: Kysely<any>, userId: string, referenceId?: string | null): Promise<BapIdentityRow | null> {
  const base = db.selectFrom("bapIdentity").select(["bapId", "rootAddress", "currentAddress", "identity"]).where("userId", "=", userId);
  if (referenceId) {
    const selected = await base.where("bapId", "=", referenceId).executeTakeFirst();
    if (selected) return selected as BapIdentityRow;
  }
  const primary = await base.orderBy("isPrimary", "desc").orderBy("createdAt", "asc").executeTakeFirst();
  return (primary as BapIdentityRow | undefined) ?? null;
}

export function bapClaims(row: BapIdentityRow): BapClaims {
  return {
    bap_id: row.bapId,
    bap: JSON.stringify({
      id: row.bapId,
      rootAddress: row.rootAddress,
      currentAddress: row.currentAddress ?? row.rootAddress,
      identity: parseJsonOrNull(row.identity),
    }),
  };
}
