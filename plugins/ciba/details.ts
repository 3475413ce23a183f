import * as v from "valibot";

/**
 * RFC 9396 §2: `authorization_details` is a JSON array of objects, each with a string `type`.
 * What each type may carry is checked by that type's own schema; until one is configured a
 * type's members are kept as the client sent them. The one place CIBA validates them.
 */
const Detail = v.looseObject({ type: v.pipe(v.string("type must be a string"), v.minLength(1, "type must not be empty"), v.maxLength(255)) });
const Details = v.pipe(v.array(Detail, "must be a JSON array of objects"), v.minLength(1, "must name at least one authorization"), v.maxLength(20, "at most 20 authorizations"));

export type AuthorizationDetail = v.InferOutput<typeof Detail>;

/** The parsed details, or the reason they are refused (RFC 9396 §5 invalid_authorization_details). */
export function validateDetails(input: unknown): { ok: true; details: AuthorizationDetail[] } | { ok: false; reason: string } {
  let parsed = input;
  if (typeof input === "string") {
    try {
      parsed = JSON.parse(input);
    } catch {
      return { ok: false, reason: "authorization_details is not valid JSON" };
    }
  }
  const result = v.safeParse(Details, parsed);
  if (result.success) return { ok: true, details: result.output };
  const issue = result.issues[0];
  const where = issue.path?.map((p) => String(p.key)).join(".");
  return { ok: false, reason: `authorization_details${where ? `.${where}` : ""}: ${issue.message}` };
}
