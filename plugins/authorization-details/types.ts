import * as v from "valibot";
import { capabilityDefinitions } from "../agents/capabilities.js";

/**
 * The `authorization_details` types we accept (RFC 9396 §2), each with its valibot schema and
 * its sentence: what the consent page shows, what a resource server enforces from the token.
 *
 * - `payment_transfer`: a transfer of at most an amount in one currency to one address
 *   ("Transfer at most 1000 USD to 1BoatS…"), after RFC 9396 §2's own payment example.
 * - `agent_capability`: one Agent Auth capability (plugins/agents/capabilities.ts), optionally
 *   pinned to given values of its arguments: the capability's own constraints, as a grant.
 *
 * Every type may carry RFC 9396 §2.2's `locations` (the resource servers it is for) and
 * `actions`; a member a type does not define is refused, so nothing unread is granted.
 */

/** Capability names, descriptions and argument names, from the agent capabilities themselves. */
const CAPABILITIES = new Map(
  // The size limit passed only shapes backup.push's JSON Schema; names and descriptions do not depend on it.
  capabilityDefinitions({ backupMaxBytes: 1 }).map((c) => [c.name, { description: c.description, arguments: Object.keys((c.input as { properties?: object }).properties ?? {}) }]),
);

const Text = (max: number) => v.pipe(v.string(), v.minLength(1), v.maxLength(max), v.regex(/^[^\p{Cc}]*$/u, "must not contain control characters"));
const Location = v.pipe(v.string(), v.maxLength(2048), v.url("must be an absolute URL"), v.check((s) => /^https?:\/\//.test(s), "must be an http(s) URL"));
const Common = {
  locations: v.optional(v.pipe(v.array(Location), v.minLength(1), v.maxLength(10))),
};

/** A decimal amount above zero, as a string (no floating point in money): "1000", "12.50". */
const Amount = v.pipe(v.string(), v.regex(/^(0|[1-9]\d{0,14})(\.\d{1,8})?$/, "must be a decimal number such as 1000 or 12.50"), v.check((s) => Number(s) > 0, "must be above zero"));

export const PaymentTransfer = v.strictObject({
  type: v.literal("payment_transfer"),
  ...Common,
  actions: v.optional(v.pipe(v.array(v.picklist(["initiate", "status"])), v.minLength(1))),
  instructedAmount: v.strictObject({
    currency: v.pipe(v.string(), v.regex(/^[A-Z]{3,4}$/, "must be an ISO 4217 code such as USD, or BSV")),
    amount: Amount,
  }),
  creditorAccount: v.strictObject({
    /** The one address the money may go to: a Bitcoin address, an IBAN, a paymail. */
    address: v.pipe(Text(128), v.regex(/^[A-Za-z0-9@._:+-]+$/, "must be an account address (letters, digits, @ . _ : + -)")),
  }),
  creditorName: v.optional(Text(140)),
  remittanceInformation: v.optional(Text(140)),
});

const ArgumentValue = v.union([Text(512), v.number(), v.boolean()]);

export const AgentCapability = v.pipe(
  v.strictObject({
    type: v.literal("agent_capability"),
    ...Common,
    capability: v.picklist([...CAPABILITIES.keys()], "must be one of this server's agent capabilities (GET /api/auth/capability/list)"),
    /** Arguments the capability may be run with only as given here. */
    constraints: v.optional(v.record(v.pipe(v.string(), v.regex(/^[A-Za-z][A-Za-z0-9_]{0,63}$/, "must be an argument name")), ArgumentValue)),
  }),
  v.check((d) => Object.keys(d.constraints ?? {}).every((k) => CAPABILITIES.get(d.capability)!.arguments.includes(k)), "constraints may name only the capability's own arguments"),
);

export const AuthorizationDetail = v.variant("type", [PaymentTransfer, AgentCapability], "type must be one of the types in authorization_details_types_supported");
export type AuthorizationDetail = v.InferOutput<typeof AuthorizationDetail>;

/** RFC 9396 §14.5 discovery: `authorization_details_types_supported`. */
export const AUTHORIZATION_DETAILS_TYPES = ["payment_transfer", "agent_capability"] as const;

/** How many entries one request may carry, and how long its JSON may be (a pushed request carries the large ones). */
export const MAX_DETAILS = 50;
export const MAX_DETAILS_JSON = 64 * 1024;

/** One entry in words, as the consent page shows it. */
export function describeAuthorizationDetail(detail: AuthorizationDetail): string {
  const where = detail.locations ? ` (at ${detail.locations.map((l) => URL.parse(l)?.host ?? l).join(", ")})` : "";
  if (detail.type === "payment_transfer") {
    const to = detail.creditorName ? `${detail.creditorName}, account ${detail.creditorAccount.address}` : detail.creditorAccount.address;
    const why = detail.remittanceInformation ? `, for “${detail.remittanceInformation}”` : "";
    return `Transfer at most ${detail.instructedAmount.amount} ${detail.instructedAmount.currency} to ${to}${why}${where}.`;
  }
  const capability = CAPABILITIES.get(detail.capability)!;
  const pinned = Object.entries(detail.constraints ?? {}).map(([k, value]) => `${k} = ${String(value)}`);
  return `Use the “${detail.capability}” capability: ${capability.description}${pinned.length ? ` Only with ${pinned.join(", ")}.` : ""}${where}`;
}
