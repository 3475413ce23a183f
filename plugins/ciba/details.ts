import { validateAuthorizationDetails, type AuthorizationDetail } from "../authorization-details/details.js";

/**
 * RFC 9396 `authorization_details` of a backchannel request: checked as at the authorization
 * endpoint, each entry against its type's schema (plugins/authorization-details), so an agent asks
 * a person for exactly what the consent page would let it ask for.
 */
export type { AuthorizationDetail };

/** The parsed details, or the reason they are refused (RFC 9396 §5 invalid_authorization_details). */
export function validateDetails(input: unknown): { ok: true; details: AuthorizationDetail[] } | { ok: false; reason: string } {
  const checked = validateAuthorizationDetails(input);
  return checked.ok ? { ok: true, details: checked.details } : { ok: false, reason: checked.description };
}
