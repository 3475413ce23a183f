import type { OAuthOptions } from "@better-auth/oauth-provider";
import { APIError } from "better-auth/api";
import type { SafeFetch } from "../../lib/safe-fetch.js";
import { isJsonObject, parseJsonOrNull } from "../../lib/json.js";

/** draft-ietf-oauth-identity-assertion-authz-grant: the token type requested at token exchange and issued. */
export const ID_JAG_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id-jag";
/** The JWT `typ` of an ID-JAG. */
export const ID_JAG_TYP = "oauth-id-jag+jwt";
/** RFC 7523 §2.1: the grant that redeems one. */
export const JWT_BEARER_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/** The client registration metadata that names the client's `client_id` at each audience. */
export const CLIENTS_METADATA_KEY = "id_jag_clients";
/** How long an assertion we issue is good for (s): the draft asks for a short one. */
export const ASSERTION_TTL = 300;
/** The longest lifetime (exp - iat) of an assertion we redeem, and the clock skew allowed (s). */
export const MAX_ASSERTION_LIFETIME = 600;
export const CLOCK_SKEW = 60;

type ResourcePolicy = NonNullable<OAuthOptions["resourcePolicy"]>;

export interface IdJagOptions {
  /** This server's issuer identifier (AUTH_URL). */
  issuer: string;
  /** ID_JAG_AUDIENCES: the resource authorization servers we issue assertions for. */
  audiences: readonly string[];
  /** ID_JAG_TRUSTED_ISSUERS: the identity providers whose assertions we redeem. */
  trustedIssuers: readonly string[];
  /** The guarded fetcher (lib/safe-fetch.ts) for the trusted issuers' discovery documents and key sets. */
  safeFetch: SafeFetch;
  /** plugins/resource-policy: which resources a client may be given. */
  policy: ResourcePolicy;
  /** This server's own resources (/mcp). */
  ownResources: readonly string[];
}

export function refuse(error: "invalid_request" | "invalid_grant" | "invalid_scope" | "invalid_target" | "unauthorized_client", description: string): never {
  throw new APIError("BAD_REQUEST", { error, error_description: description });
}

/** A client's `id_jag_clients` (audience issuer -> its client_id there), from its stored metadata. */
export function clientMappings(metadata: unknown): Record<string, string> {
  const parsed = typeof metadata === "string" ? parseJsonOrNull(metadata) : metadata;
  const value = isJsonObject(parsed) ? parsed[CLIENTS_METADATA_KEY] : undefined;
  if (!isJsonObject(value)) return {};
  return Object.fromEntries(Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === "string"));
}
