import { parseJsonOrNull } from "../../lib/json.js";
import { isPublicHttpsUrl } from "../../lib/user-facing.js";
import type { BapIdentity } from "./store.js";

/** The claims a selected BAP profile contributes to ID tokens and userinfo. */
export interface BapClaims {
  bap_id: string;
  /** JSON string: id, rootAddress, currentAddress, identity (what the Sigma client reads). */
  bap: string;
}

/**
 * OIDC Core §5.4: the scope that releases each standard claim. A standard claim leaves the
 * server only under its scope, the one the consent page showed; the `claims` request parameter
 * (§5.5), which could name e-mail or name under `openid` alone, is not offered.
 */
const SCOPE_OF_CLAIM: Record<string, string> = {
  ...Object.fromEntries(
    ["name", "given_name", "family_name", "middle_name", "nickname", "preferred_username", "profile", "picture", "website", "gender", "birthdate", "zoneinfo", "locale", "updated_at"].map((c) => [c, "profile"]),
  ),
  email: "email",
  email_verified: "email",
  address: "address",
  phone_number: "phone",
  phone_number_verified: "phone",
};

const releasedByScope = (name: string, scopes: readonly string[]) => !Object.hasOwn(SCOPE_OF_CLAIM, name) || scopes.includes(SCOPE_OF_CLAIM[name]!);
/**
 * A relying party puts `picture` in an <img src> (OIDC Core §5.1): only an https URL is
 * released, whatever is stored (an image saved before the sign-up rule, or from elsewhere).
 */
const safeValue = (name: string, value: unknown) => name !== "picture" || (typeof value === "string" && isPublicHttpsUrl(value));

/** `claims` without the standard claims that `scopes` do not release, and without an unsafe picture. Other claims pass. */
export function releasableClaims(claims: Record<string, unknown>, scopes: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(claims).filter(([name, value]) => releasedByScope(name, scopes) && safeValue(name, value)));
}

export function bapClaims(row: Pick<BapIdentity, "bapId" | "rootAddress" | "currentAddress" | "identity">): BapClaims {
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
