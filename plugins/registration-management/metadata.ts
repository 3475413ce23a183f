import { isLoopbackIP } from "@better-auth/core/utils/host";
import { isReverseDomainPrivateUseRedirectUri } from "@better-auth/core/utils/redirect-uri";
import { parseJsonOrNull } from "../../lib/json.js";
import { checkClientMetadata } from "../registration-policy/index.js";
import { managedJwksUri } from "../client-keys/key-set.js";
import { clientRequiresPar, REQUIRE_PAR_FIELD } from "../pushed-authorization/index.js";

/** The oauthClient row as better-auth's adapter reads it (lists parsed). */
export interface ClientRow {
  clientId: string;
  clientSecret?: string | null;
  createdAt?: Date | string | null;
  name?: string | null;
  uri?: string | null;
  icon?: string | null;
  contacts?: string[] | null;
  tos?: string | null;
  policy?: string | null;
  softwareId?: string | null;
  softwareVersion?: string | null;
  redirectUris?: string[] | null;
  postLogoutRedirectUris?: string[] | null;
  tokenEndpointAuthMethod?: string | null;
  grantTypes?: string[] | null;
  responseTypes?: string[] | null;
  applicationType?: string | null;
  scopes?: string[] | null;
  jwksUri?: string | null;
  /** The client's public keys (RFC 7517 JWK Set) as oauth-provider stores them: JSON text. */
  jwks?: string | null;
  /** Client metadata (JSON): where plugins/client-keys keeps a managed `jwks_uri`. */
  metadata?: unknown;
  memberPubkey?: string | null;
  ownerBapId?: string | null;
  backchannelTokenDeliveryMode?: string | null;
  backchannelClientNotificationEndpoint?: string | null;
}

const seconds = (value: Date | string | null | undefined) => (value ? Math.floor(new Date(value).getTime() / 1000) : undefined);

/** RFC 7592 §3 client information: the registered metadata (RFC 7591 names), never the secret. */
export function clientInformation(row: ClientRow): Record<string, unknown> {
  const jwksUri = managedJwksUri(row) ?? row.jwksUri;
  const info: Record<string, unknown> = {
    client_id: row.clientId,
    client_id_issued_at: seconds(row.createdAt),
    // The secret is stored hashed; it does not expire (RFC 7591 §3.2.1: 0).
    ...(row.clientSecret ? { client_secret_expires_at: 0 } : {}),
    client_name: row.name,
    client_uri: row.uri,
    logo_uri: row.icon,
    tos_uri: row.tos,
    policy_uri: row.policy,
    contacts: row.contacts,
    software_id: row.softwareId,
    software_version: row.softwareVersion,
    redirect_uris: row.redirectUris ?? [],
    post_logout_redirect_uris: row.postLogoutRedirectUris,
    token_endpoint_auth_method: row.tokenEndpointAuthMethod,
    grant_types: row.grantTypes,
    response_types: row.responseTypes,
    application_type: row.applicationType,
    scope: row.scopes?.join(" "),
    jwks_uri: jwksUri,
    // RFC 7591 §2: jwks or jwks_uri; a set fetched from jwks_uri (plugins/client-keys) is not the client's to send back.
    jwks: jwksUri || !row.jwks ? undefined : parseJsonOrNull(row.jwks),
    member_pubkey: row.memberPubkey,
    owner_bap_id: row.ownerBapId,
    // RFC 9126 §6, kept in the client's metadata (plugins/pushed-authorization).
    ...(clientRequiresPar(row.metadata) ? { [REQUIRE_PAR_FIELD]: true } : {}),
    // OpenID CIBA §4 (plugins/ciba), set at registration.
    backchannel_token_delivery_mode: row.backchannelTokenDeliveryMode,
    backchannel_client_notification_endpoint: row.backchannelClientNotificationEndpoint,
  };
  return Object.fromEntries(Object.entries(info).filter(([, value]) => value !== null && value !== undefined));
}

type Refusal = { error: "invalid_client_metadata" | "invalid_redirect_uri" | "invalid_request"; error_description: string };

/** What a PUT may set, RFC 7591 name -> row field. Omitted ones are cleared (RFC 7592 §2.2). */
const REPLACEABLE = {
  client_name: "name",
  client_uri: "uri",
  logo_uri: "icon",
  tos_uri: "tos",
  policy_uri: "policy",
  software_id: "softwareId",
  software_version: "softwareVersion",
} as const;

/** Fixed at registration: a PUT may repeat them, not change them (RFC 7592 §2.2 lets the server refuse). */
const FIXED = {
  token_endpoint_auth_method: (row: ClientRow) => row.tokenEndpointAuthMethod,
  application_type: (row: ClientRow) => row.applicationType,
  grant_types: (row: ClientRow) => row.grantTypes,
  response_types: (row: ClientRow) => row.responseTypes,
  [REQUIRE_PAR_FIELD]: (row: ClientRow) => clientRequiresPar(row.metadata),
} as const;

/** Read-only members a client sends back from its information; ignored (RFC 7592 §2.2). */
const IGNORED = new Set(["client_id", "client_secret", "client_secret_expires_at", "client_id_issued_at", "registration_access_token", "registration_client_uri", "member_pubkey", "owner_bap_id", "jwks_uri", "jwks", "backchannel_token_delivery_mode", "backchannel_client_notification_endpoint"]);

/** A client that never redirects: its grants are all without a browser (client credentials, token exchange). */
export function usesNoRedirect(row: ClientRow): boolean {
  const grants = row.grantTypes?.length ? row.grantTypes : ["authorization_code"];
  return !grants.includes("authorization_code");
}

const sameList = (a: unknown, b: unknown) => {
  const left = Array.isArray(a) ? [...a].map(String).sort() : [];
  const right = Array.isArray(b) ? [...b].map(String).sort() : [];
  return left.length === right.length && left.every((v, i) => v === right[i]);
};

/** The exact loopback hosts a native client may use http on (RFC 8252 §7.3), as written in the URI. */
const NATIVE_HTTP_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * The redirect rules of registration, for an RFC 7592 update: oauth-provider's
 * `validateClientRedirectUri` (not exported) over the same @better-auth/core predicates, so a
 * PUT accepts exactly what a registration would (tests/oauth/registration-management.test.ts
 * compares the two). Absolute, no fragment or credentials; web clients https on a
 * non-loopback host; native clients that too, http on an exact loopback host (as written, not
 * as normalised: `127.1` is not `127.0.0.1`), or a reverse-domain private-use scheme without an
 * authority (RFC 8252 §7.1).
 */
export function redirectUriProblem(uri: unknown, applicationType: string | null | undefined): string | null {
  if (typeof uri !== "string" || uri.length > 2048) return "must be a string of at most 2048 characters";
  const url = URL.parse(uri);
  if (!url) return "must be an absolute URI";
  if (uri.includes("#") || url.username || url.password) return "must not include credentials or a fragment";
  if (/^localhost\.+$/i.test(url.hostname)) return "must not end localhost with dots";
  const loopback = isLoopbackIP(url.hostname) || url.hostname === "localhost";
  if (url.protocol === "https:") return loopback ? "must not be https on a loopback host" : null;
  if (applicationType !== "native") return "must be https on a non-loopback host (web client)";
  if (url.protocol === "http:") {
    const written = /^http:\/\/(\[[^\]]*\]|[^/?#:]*)/i.exec(uri)?.[1]?.toLowerCase();
    return written && NATIVE_HTTP_HOSTS.has(written) ? null : "may be http only on localhost, 127.0.0.1 or [::1]";
  }
  if (!isReverseDomainPrivateUseRedirectUri(url)) return "a private-use scheme must be a reverse domain name without an authority (RFC 8252 §7.1)";
  return null;
}

/**
 * RFC 7592 §2.2: a PUT carries the client's whole metadata; what it omits is cleared. Answers
 * the row fields to write, or the RFC 7591 §3.2.2 error.
 */
export function clientUpdate(row: ClientRow, body: unknown, options: { development: boolean }): { fields: Record<string, unknown> } | Refusal {
  if (!body || typeof body !== "object" || Array.isArray(body)) return { error: "invalid_request", error_description: "send the client metadata as a JSON object" };
  const input = body as Record<string, unknown>;
  if (input.client_id !== row.clientId) return { error: "invalid_request", error_description: "client_id must be the managed client's id" };
  try {
    checkClientMetadata(input, options.development);
  } catch (err) {
    const body = (err as { body?: Refusal }).body;
    if (body?.error) return { error: body.error, error_description: body.error_description };
    throw err;
  }
  for (const [name, current] of Object.entries(FIXED)) {
    if (input[name] === undefined) continue;
    const was = current(row);
    const same = Array.isArray(was) || Array.isArray(input[name]) ? sameList(input[name], was) : input[name] === was;
    if (!same) return { error: "invalid_client_metadata", error_description: `${name} cannot change; register a new client instead` };
  }
  for (const name of Object.keys(input)) {
    if (!(name in REPLACEABLE) && !(name in FIXED) && !IGNORED.has(name) && !["redirect_uris", "post_logout_redirect_uris", "contacts", "scope"].includes(name)) {
      return { error: "invalid_client_metadata", error_description: `${name} cannot be set by this endpoint` };
    }
  }
  // A client that never redirects (RFC 7591 §2: redirect_uris serve redirect-based flows) may send none.
  const redirects = input.redirect_uris ?? (usesNoRedirect(row) ? [] : undefined);
  if (!Array.isArray(redirects) || (redirects.length === 0 && !usesNoRedirect(row))) return { error: "invalid_redirect_uri", error_description: "redirect_uris must list at least one URI" };
  for (const [field, list] of [["redirect_uris", redirects], ["post_logout_redirect_uris", input.post_logout_redirect_uris ?? []]] as const) {
    if (!Array.isArray(list)) return { error: "invalid_client_metadata", error_description: `${field} must be an array` };
    for (const uri of list) {
      const problem = redirectUriProblem(uri, row.applicationType);
      if (problem) return { error: "invalid_redirect_uri", error_description: `${field}: ${String(uri).slice(0, 100)} ${problem}` };
    }
  }
  const fields: Record<string, unknown> = {
    redirectUris: redirects,
    postLogoutRedirectUris: Array.isArray(input.post_logout_redirect_uris) && input.post_logout_redirect_uris.length ? input.post_logout_redirect_uris : null,
  };
  for (const [name, field] of Object.entries(REPLACEABLE)) {
    const value = input[name];
    if (value !== undefined && value !== null && typeof value !== "string") return { error: "invalid_client_metadata", error_description: `${name} must be a string` };
    fields[field] = value ?? null;
  }
  const contacts = input.contacts;
  if (contacts !== undefined && contacts !== null && (!Array.isArray(contacts) || contacts.some((c) => typeof c !== "string" || c.length === 0))) {
    return { error: "invalid_client_metadata", error_description: "contacts must be an array of strings" };
  }
  fields.contacts = Array.isArray(contacts) && contacts.length ? contacts : null;
  // A client may narrow its scope, never widen it past what registration granted.
  if (input.scope !== undefined) {
    if (typeof input.scope !== "string") return { error: "invalid_client_metadata", error_description: "scope must be a string" };
    const asked = input.scope.split(" ").filter(Boolean);
    const granted = new Set(row.scopes ?? []);
    const extra = asked.filter((s) => !granted.has(s));
    if (extra.length) return { error: "invalid_client_metadata", error_description: `scope may not add ${extra.join(" ")}` };
    if (asked.length) fields.scopes = asked;
  }
  return { fields };
}
