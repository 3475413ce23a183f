import type { Schema } from "./components.js";

/**
 * The success answers of better-auth endpoints whose metadata does not describe them (or
 * describes them wrongly), by "METHOD path": what the service really sends. Each entry replaces
 * the generator's 2xx/3xx responses of that operation.
 */

const str: Schema = { type: "string" };
const strOrNull: Schema = { type: ["string", "null"] };
const bool: Schema = { type: "boolean" };
const num: Schema = { type: "number" };
const dateTime: Schema = { type: "string", format: "date-time" };
const strings: Schema = { type: "array", items: str };
const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

/** An object with these properties; `required` lists the ones always present. */
function obj(properties: Record<string, Schema>, required: string[] = [], description?: string): Schema {
  return { type: "object", properties, ...(required.length ? { required } : {}), ...(description ? { description } : {}) };
}

const json = (description: string, schema: Schema, status = 200) => ({ [status]: { description, content: { "application/json": { schema } } } });
const redirect = (description: string, status = 302) => ({
  [status]: { description, headers: { Location: { description: "Where the browser goes next.", schema: { type: "string", format: "uri-reference" } } } },
});

/** RFC 7591 §3.2.1 client information (oauth-provider's `schemaToOAuth`): what registration and client reads answer. */
export const CLIENT_INFORMATION: Schema = obj(
  {
    client_id: str,
    client_secret: { type: "string", description: "Only when the client has one (confidential), and only on registration and rotation." },
    client_secret_expires_at: { type: "number", description: "0: never expires." },
    client_id_issued_at: num,
    scope: { type: "string", description: "Space-separated scopes the client may ask for." },
    user_id: str,
    client_name: str,
    client_uri: str,
    logo_uri: str,
    contacts: strings,
    tos_uri: str,
    policy_uri: str,
    jwks: { type: "object", description: "The client's JSON Web Key Set (private_key_jwt)." },
    jwks_uri: str,
    software_id: str,
    software_version: str,
    software_statement: str,
    redirect_uris: strings,
    post_logout_redirect_uris: strings,
    backchannel_logout_uri: str,
    backchannel_logout_session_required: bool,
    token_endpoint_auth_method: str,
    grant_types: strings,
    response_types: strings,
    application_type: str,
    disabled: bool,
    skip_consent: bool,
    enable_end_session: bool,
    require_pkce: bool,
    dpop_bound_access_tokens: bool,
    subject_type: str,
    reference_id: str,
    member_pubkey: { type: "string", description: "The BAP member key whose signature the refresh grant requires (clients registered with one)." },
    owner_bap_id: str,
    registration_access_token: { type: "string", description: "RFC 7592: the token that manages this registration (on registration only)." },
    registration_client_uri: { type: "string", description: "RFC 7592: where the registration is read, updated and deleted." },
  },
  ["client_id", "redirect_uris"],
  "RFC 7591 §3.2.1 client information response; extension metadata the client registered is echoed too.",
);

const CLIENT = ref("OAuthClientInformation");

/** A public client's display information (consent and sign-in pages). */
const PUBLIC_CLIENT = obj({ client_id: str, client_name: str, client_uri: str, logo_uri: str, contacts: strings, tos_uri: str, policy_uri: str }, ["client_id"]);

const CONSENT = obj({ id: str, clientId: str, userId: strOrNull, referenceId: strOrNull, scopes: strings, createdAt: dateTime, updatedAt: dateTime }, ["id", "clientId", "scopes"]);

/** A session as list-sessions answers it: the token is left out. */
const LISTED_SESSION: Schema = ref("ListedSession");

const STATUS_FLAG = obj({ status: bool }, ["status"]);

/** agent-auth's (draft) answers: the top-level members, loosely: the plugin documents the rest. */
const agentAuth = (description: string, properties: Record<string, Schema>, required: string[] = []) => json(description, obj(properties, required, `${description} (Agent Auth protocol draft; members beyond these may appear).`));
const AGENT_VIEW = obj({ agent_id: str, name: str, status: str, mode: str, host_id: strOrNull, agent_capability_grants: { type: "array", items: { type: "object" } } }, [], "An agent as the agent-auth plugin shows it.");
const HOST_VIEW = obj({ id: str, name: strOrNull, status: str, default_capabilities: strings, created_at: str }, [], "An agent host as the agent-auth plugin shows it.");
const SIGN_IN = obj({ token: { type: "string", description: "The session token (the session cookie is set too)." }, user: obj({ id: str, pubkey: strOrNull, name: str }, ["id", "name"]) }, ["token", "user"]);

/** Request bodies, parameters and security of endpoints whose metadata does not describe them. */
const bapIdBody = (properties: Record<string, Schema> = {}) => ({
  required: true,
  description: "The exact bytes the Bitcoin-Auth token in x-auth-token signs (compact JSON).",
  content: { "application/json": { schema: obj({ bapId: { type: "string", description: "The BAP identity key." }, ...properties }, ["bapId"]) } },
});
const authTokenHeader = { name: "x-auth-token", in: "header", required: true, description: "Bitcoin-Auth token by the identity's member key over this path and body.", schema: str };
export const BETTER_AUTH_REQUESTS: Record<string, Record<string, unknown>> = {
  "POST /api/auth/sign-in/sigma": { requestBody: bapIdBody(), parameters: [authTokenHeader], security: [{ bitcoinAuth: [] }] },
  "POST /api/auth/sign-up/sigma": {
    requestBody: bapIdBody({ intent: { type: "string", const: "sign-up" } }),
    parameters: [authTokenHeader, { name: "x-sigma-enrollment-proof", in: "header", required: true, description: "A second Bitcoin-Auth token by the same key over the same path and body.", schema: str }],
    security: [{ bitcoinAuth: [] }],
  },
};

export const BETTER_AUTH_SUCCESS: Record<string, Record<string, unknown>> = {
  "POST /api/auth/ciba/decide": json("The person's decision on the CIBA request, recorded.", obj({ status: { type: "string", enum: ["approved", "denied"] } }, ["status"])),
  "GET /api/auth/list-sessions": json("The user's active sessions (tokens left out).", { type: "array", items: LISTED_SESSION }),
  "POST /api/auth/sign-in/sigma": json("Signed in with the BAP member key: the session cookie is set.", SIGN_IN),
  "POST /api/auth/sign-up/sigma": json("Signed up with the BAP member key: the session cookie is set.", SIGN_IN),
  "POST /api/auth/admin/stop-impersonating": json("Back to the administrator's own session.", obj({ session: ref("Session"), user: ref("User") }, ["session", "user"])),
  "GET /api/auth/callback/{id}": redirect("Back from the provider: to the callback URL the sign-in named (or the error page)."),
  "POST /api/auth/callback/{id}": redirect("Back from a form-post provider (Apple): to the callback URL the sign-in named (or the error page)."),
  "GET /api/auth/change-email/confirm": redirect("The change is confirmed: to the callback URL."),
  "GET /api/auth/change-email/undo": redirect("The change is undone: to the callback URL."),
  "GET /api/auth/error": { 200: { description: "The error page of the account surface.", content: { "text/html": { schema: str } } }, ...redirect("To our error page, with the error code.") },
  "POST /api/auth/oauth2/revoke": { 200: { description: "Revoked, or the token was not valid (RFC 7009 §2.2): an empty body." } },
  "POST /api/auth/oauth2/register": json("Registered (RFC 7591 §3.2.1).", CLIENT, 201),
  "GET /api/auth/oauth2/register/{clientId}": json("The registration (RFC 7592 §2.1).", CLIENT),
  "PUT /api/auth/oauth2/register/{clientId}": json("The updated registration (RFC 7592 §2.2).", CLIENT),
  "DELETE /api/auth/oauth2/register/{clientId}": { 204: { description: "Deleted (RFC 7592 §2.3)." } },
  "POST /api/auth/oauth2/client/rotate-secret": json("The client with its new secret.", CLIENT),
  "POST /api/auth/oauth2/delete-client": json("Deleted.", { type: ["object", "null"] }),
  "GET /api/auth/oauth2/get-client": json("The client.", CLIENT),
  "GET /api/auth/oauth2/get-clients": json("The signed-in user's clients.", { type: "array", items: CLIENT }),
  "POST /api/auth/oauth2/update-client": json("The updated client.", CLIENT),
  "GET /api/auth/oauth2/public-client": json("The client's public information.", PUBLIC_CLIENT),
  "POST /api/auth/oauth2/public-client-prelogin": json("The client's public information.", PUBLIC_CLIENT),
  "GET /api/auth/oauth2/get-consent": json("The consent.", CONSENT),
  "GET /api/auth/oauth2/get-consents": json("The signed-in user's consents.", { type: "array", items: CONSENT }),
  "POST /api/auth/oauth2/update-consent": json("The updated consent.", CONSENT),
  "POST /api/auth/oauth2/delete-consent": json("Deleted.", { type: ["object", "null"] }),
  "POST /api/auth/oauth2/consent": json("Consent processed: where the browser goes next (with a code or an error).", obj({ redirect: bool, url: { type: "string", format: "uri" }, redirect_uri: { type: "string", format: "uri" } })),
  "POST /api/auth/oauth2/end-session/confirm": json("Signed out: where the browser goes next.", obj({ redirect: bool, url: str })),
  "POST /api/auth/organization/cancel-invitation": json("The canceled invitation.", ref("Invitation")),
  "POST /api/auth/organization/check-slug": json("The slug is free.", STATUS_FLAG),
  "GET /api/auth/organization/get-active-member-role": json("The signed-in user's role in the active organization.", obj({ role: str }, ["role"])),
  "POST /api/auth/organization/leave": json("Left: the membership that ended.", ref("Member")),
  "GET /api/auth/organization/list-invitations": json("The organization's invitations.", { type: "array", items: ref("Invitation") }),
  "GET /api/auth/organization/list-members": json("The organization's members.", obj({ members: { type: "array", items: ref("Member") }, total: num }, ["members"])),
  "POST /api/auth/passkey/verify-registration": json("The passkey registered.", ref("Passkey")),
  "GET /api/auth/agent-configuration": json("Agent Auth discovery (the same document as /.well-known/agent-configuration).", obj({ version: str, provider_name: str, description: str, issuer: str, default_location: str, algorithms: strings, modes: strings, approval_methods: strings, endpoints: { type: "object", additionalProperties: str } }, ["version", "issuer", "endpoints"])),
  "GET /api/auth/agent-approval": agentAuth("The pending approval for a user code", { agent_id: str, name: str, capabilities: strings, status: str }),
  "POST /api/auth/agent/approve-capability": agentAuth("The approval decision", { status: str, agent_id: str, agentId: str, claimed: bool }, ["status"]),
  "POST /api/auth/agent/ciba/authorize": agentAuth("A backchannel authentication request", { auth_req_id: str, expires_in: num, interval: num }),
  "GET /api/auth/agent/ciba/pending": agentAuth("The signed-in user's pending backchannel requests", { requests: { type: "array", items: { type: "object" } } }, ["requests"]),
  "POST /api/auth/agent/claim": agentAuth("The claimed agent", { agent_id: str, status: str }),
  "POST /api/auth/agent/cleanup": agentAuth("Expired agents cleaned up", { cleaned: num }),
  "POST /api/auth/agent/device/code": agentAuth("A device authorization for the agent (RFC 8628 §3.2)", { device_code: str, user_code: str, verification_uri: str, verification_uri_complete: str, expires_in: num, interval: num }),
  "GET /api/auth/agent/get": agentAuth("The agent", AGENT_VIEW.properties as Record<string, Schema>),
  "POST /api/auth/agent/grant-capability": agentAuth("The grants given", { agent_id: str, grant_ids: strings, added: strings }),
  "POST /api/auth/agent/introspect": agentAuth("Whether the agent token is active", { active: bool }, ["active"]),
  "GET /api/auth/agent/list": agentAuth("The signed-in user's agents", { agents: { type: "array", items: AGENT_VIEW } }, ["agents"]),
  "POST /api/auth/agent/reactivate": agentAuth("The reactivated agent", { agent_id: str, status: str }),
  "POST /api/auth/agent/register": agentAuth("The registered agent", { agent_id: str, name: str, status: str, mode: str, agent_capability_grants: { type: "array", items: { type: "object" } } }),
  "POST /api/auth/agent/request-capability": agentAuth("The capability request", { agent_id: str, status: str, agent_capability_grants: { type: "array", items: { type: "object" } } }),
  "POST /api/auth/agent/revoke": agentAuth("The revoked agent", { agent_id: str, status: str }),
  "POST /api/auth/agent/revoke-capability": agentAuth("The revoked grants", { agent_id: str, revoked: strings }),
  "POST /api/auth/agent/rotate-key": agentAuth("The agent with its new key", { agent_id: str, status: str }),
  "GET /api/auth/agent/session": agentAuth("The agent's session", { type: str, agent: { type: "object" }, user: { type: ["object", "null"] } }),
  "GET /api/auth/agent/status": agentAuth("The agent's status and grants", { agent_id: str, status: str, agent_capability_grants: { type: "array", items: { type: "object" } } }),
  "POST /api/auth/agent/update": agentAuth("The updated agent", { agent_id: str, name: str, status: str }),
  "POST /api/auth/capability/batch-execute": agentAuth("The answers, one per request", { responses: { type: "array", items: { type: "object" } } }, ["responses"]),
  "GET /api/auth/capability/describe": agentAuth("One capability with its input schema", { name: str, description: str, input: { type: "object" } }),
  "POST /api/auth/capability/execute": agentAuth("The capability's result", { data: {} }),
  "GET /api/auth/capability/list": agentAuth("The capabilities this server offers", {
    capabilities: { type: "array", items: obj({ name: str, description: str, input_fields: { type: "array", items: obj({ name: str, type: str, description: str }) } }, ["name"]) },
    has_more: bool,
  }, ["capabilities"]),
  "POST /api/auth/host/create": agentAuth("The created host with its enrollment token", { hostId: str, host_id: str, enrollment_token: str, enrollmentToken: str }),
  "POST /api/auth/host/enroll": agentAuth("The enrolled host", { host_id: str, status: str }),
  "GET /api/auth/host/get": agentAuth("The host", HOST_VIEW.properties as Record<string, Schema>),
  "GET /api/auth/host/list": agentAuth("The signed-in user's agent hosts", { hosts: { type: "array", items: HOST_VIEW } }, ["hosts"]),
  "POST /api/auth/host/revoke": agentAuth("The revoked host", { host_id: str, status: str }),
  "POST /api/auth/host/rotate-key": agentAuth("The host with its new key", { host_id: str, status: str }),
  "POST /api/auth/host/switch-account": agentAuth("The host moved to the signed-in account", { host_id: str, status: str }),
  "POST /api/auth/host/update": agentAuth("The updated host", { host_id: str, name: str, status: str }),
};
