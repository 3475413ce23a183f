import * as v from "valibot";
import { AuthorizationDetail, describeAuthorizationDetail, MAX_DETAILS, MAX_DETAILS_JSON } from "./types.js";

export type { AuthorizationDetail } from "./types.js";

export type DetailsCheck = { ok: true; details: AuthorizationDetail[] } | { ok: false; description: string };

/**
 * RFC 9396 §2: `authorization_details` (its JSON text, as a request parameter carries it, or the
 * parsed array) checked against the registered types; the error is `invalid_authorization_details`
 * (§5). Used at the authorization endpoint, at the pushed authorization request endpoint and
 * at token exchange; CIBA's backchannel request takes it too.
 */
export function validateAuthorizationDetails(input: unknown): DetailsCheck {
  let value = input;
  if (typeof input === "string") {
    if (input.length > MAX_DETAILS_JSON) return { ok: false, description: `authorization_details is over ${MAX_DETAILS_JSON} bytes` };
    try {
      value = JSON.parse(input);
    } catch {
      return { ok: false, description: "authorization_details must be a JSON array" };
    }
  }
  if (!Array.isArray(value) || value.length === 0) return { ok: false, description: "authorization_details must be a non-empty JSON array" };
  if (value.length > MAX_DETAILS) return { ok: false, description: `authorization_details may carry at most ${MAX_DETAILS} entries` };
  const details: AuthorizationDetail[] = [];
  for (const [i, entry] of value.entries()) {
    const result = v.safeParse(AuthorizationDetail, entry);
    if (!result.success) {
      const issue = result.issues[0];
      const pointer = `/${[i, ...(issue.path?.map((p) => String(p.key)) ?? [])].join("/")}`;
      return { ok: false, description: `authorization_details ${pointer}: ${issue.message}` };
    }
    details.push(result.output);
  }
  return { ok: true, details };
}

/** The details in words, one sentence each (the consent page, CIBA's approval page). */
export function describeAuthorizationDetails(details: readonly AuthorizationDetail[]): string[] {
  return details.map(describeAuthorizationDetail);
}

/** Whether `narrow` grants nothing `wide` does not (RFC 9396 §6.2 / token exchange: a subset only). */
function covers(wide: AuthorizationDetail, narrow: AuthorizationDetail): boolean {
  if (wide.type !== narrow.type) return false;
  const within = (outer?: string[], inner?: string[]) => !outer || (inner !== undefined && inner.every((x) => outer.includes(x)));
  if (!within(wide.locations, narrow.locations)) return false;
  if (wide.type === "payment_transfer" && narrow.type === "payment_transfer") {
    return (
      within(wide.actions, narrow.actions) &&
      wide.creditorAccount.address === narrow.creditorAccount.address &&
      wide.instructedAmount.currency === narrow.instructedAmount.currency &&
      Number(narrow.instructedAmount.amount) <= Number(wide.instructedAmount.amount) &&
      (wide.creditorName === undefined || wide.creditorName === narrow.creditorName) &&
      (wide.remittanceInformation === undefined || wide.remittanceInformation === narrow.remittanceInformation)
    );
  }
  if (wide.type === "agent_capability" && narrow.type === "agent_capability") {
    return wide.capability === narrow.capability && Object.entries(wide.constraints ?? {}).every(([k, value]) => narrow.constraints?.[k] === value);
  }
  return false;
}

/** Whether every entry of `requested` is covered by one of `granted`. */
export function isSubsetOfDetails(requested: readonly AuthorizationDetail[], granted: readonly AuthorizationDetail[]): boolean {
  return requested.every((r) => granted.some((g) => covers(g, r)));
}
