import { Hono, type Context } from "hono";
import { DEPRECATION_NOTICE_PATH, type DeprecatedRoute } from "../../lib/deprecations.js";
import { BASE_PATH } from "../../lib/mount-paths.js";
import { AUTH_PATHS } from "../../lib/auth-endpoints.js";
import type { RouteDeps, RouteEnv } from "../middleware.js";

/**
 * GET /llms.txt: the agent orientation document (spec, Versioning 3: where breaking changes
 * are announced; discovery names it as `service_documentation`). Plain text an agent can read
 * in one go: what this service is, and the first calls of each way in. Endpoints come from
 * the live discovery metadata, the deprecations from the same table as the response headers.
 */
export interface LlmsTxtDeps extends RouteDeps {
  /** AUTH_URL: the issuer. */
  issuer: string;
  /** Key sign-in's route name (SIGMA_SERVICE_NAME). */
  sigmaServiceName: string;
  /** Agent hosts may register themselves (AGENT_DYNAMIC_HOSTS). */
  agentDynamicHosts: boolean;
  deprecations: readonly DeprecatedRoute[];
  /** The text once built (it depends on configuration only). */
  document: { text?: Promise<string> };
}

type Ctx = Context<RouteEnv<LlmsTxtDeps>>;

const list = (value: unknown) => (Array.isArray(value) ? value.join(", ") : "");

function deprecationLines(table: readonly DeprecatedRoute[]): string[] {
  if (!table.length) return ["None at present."];
  return table.map((route) => {
    const sunset = route.sunsetAt ? `; removed on ${route.sunsetAt.toISOString().slice(0, 10)}` : "";
    return `- ${route.method} ${route.path}: deprecated since ${route.deprecatedAt.toISOString().slice(0, 10)}${sunset}.${route.note ? ` ${route.note}` : ""}`;
  });
}

const ID_JAG = "urn:ietf:params:oauth:token-type:id-jag";
const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/** Enterprise-managed authorization (ID-JAG): each side only where discovery says it works. */
function idJagLines(m: Record<string, unknown>, tokenEndpoint: string): string[] {
  const issues = Array.isArray(m.identity_chaining_requested_token_types_supported) && m.identity_chaining_requested_token_types_supported.includes(ID_JAG);
  const redeems = Array.isArray(m.grant_types_supported) && m.grant_types_supported.includes(JWT_BEARER);
  if (!issues && !redeems) return [];
  return [
    "## Reach another app for the person (enterprise-managed authorization, ID-JAG)",
    ...(issues
      ? [
          `Here as the identity provider: a confidential client registered with grant_types including urn:ietf:params:oauth:grant-type:token-exchange and "id_jag_clients": {"<the other authorization server's issuer>": "<your client_id there>"} gets an identity assertion for a person signed in with it: POST ${tokenEndpoint} with its client credentials, grant_type=urn:ietf:params:oauth:grant-type:token-exchange, requested_token_type=${ID_JAG}, subject_token=<the person's ID token from us> (subject_token_type=urn:ietf:params:oauth:token-type:id_token; or their access token, ...:access_token), audience=<that issuer>, and optionally scope and resource (what to ask there). The answer's access_token is the assertion (a JWT, typ oauth-id-jag+jwt, good for 5 minutes; issued_token_type ${ID_JAG}, token_type N_A). Only the audiences this server's operator allows (discovery: identity_chaining_requested_token_types_supported): another audience is invalid_target, a client with no client_id for it unauthorized_client.`,
        ]
      : []),
    ...(redeems
      ? [
          `Here as the app's authorization server: POST ${tokenEndpoint} with your client credentials, grant_type=${JWT_BEARER} and assertion=<an ID-JAG from an identity provider this server trusts, aud this issuer, client_id yours here>, optionally resource and a narrower scope. The answer is our access token (no refresh token) for the person whose verified e-mail address here is the assertion's email claim. Each assertion works once; an expired, replayed, foreign or untrusted one is invalid_grant. openid-client: genericGrantRequest for both calls.`,
        ]
      : []),
    "",
  ];
}

async function build(deps: LlmsTxtDeps): Promise<string> {
  const m = (await deps.auth.api.getOpenIdConfig()) as unknown as Record<string, unknown>;
  const api = deps.issuer + BASE_PATH;
  const at = (key: string, fallback: string) => (typeof m[key] === "string" ? (m[key] as string) : fallback);
  return [
    "# Identity provider",
    "",
    `> An OAuth 2.1 / OpenID Connect authorization server at ${deps.issuer} where people and AI agents sign in with BAP (Bitcoin) identity keys, besides e-mail/password, social sign-in and passkeys. It verifies signatures and never holds private keys: never send it a key, a WIF, a backup password or a seed phrase.`,
    "",
    "## Start here",
    `- Issuer: ${deps.issuer}`,
    `- Discovery: ${deps.issuer}/.well-known/openid-configuration (also /.well-known/oauth-authorization-server)`,
    `- Agent Auth Protocol discovery: ${deps.issuer}/.well-known/agent-configuration`,
    `- API reference (OpenAPI 3.1): ${deps.issuer}/api/openapi.json`,
    `- Signing keys (JWKS): ${at("jwks_uri", `${api}/jwks`)}`,
    `- Scopes: ${list(m.scopes_supported)}`,
    `- Grant types: ${list(m.grant_types_supported)}`,
    `- Certificate catalog: ${deps.issuer}/api/certificates/types`,
    "- Errors: OAuth endpoints answer RFC 6749 objects {error, error_description}; our /api routes answer RFC 9457 application/problem+json with a `code`; the rest of /api/auth answers {message, code}.",
    "",
    "## Register a client (no account needed; the same host is the sandbox)",
    `POST ${at("registration_endpoint", `${api}${AUTH_PATHS.register}`)} with JSON, RFC 7591:`,
    '  {"client_name": "My agent", "redirect_uris": ["http://127.0.0.1:8765/callback"], "token_endpoint_auth_method": "none", "grant_types": ["authorization_code", "refresh_token"]}',
    "Public clients (token_endpoint_auth_method none) get no secret and must use PKCE with S256. Redirect URIs are https, or http on loopback; matched exactly.",
    `Then: authorization code + PKCE at ${at("authorization_endpoint", `${api}/oauth2/authorize`)}, tokens at ${at("token_endpoint", `${api}${AUTH_PATHS.token}`)}.`,
    "A client registered with member_pubkey must send X-Auth-Token (a Bitcoin-Auth token by that key over the token path and the exact form body) on every token request.",
    `Brand a client you registered while signed in (Plus and Pro tiers; Pro is white-label): PUT ${deps.issuer}/api/clients/<client_id>/branding with the owner's session and {"displayName", "logoUri" (https PNG, JPEG or WebP, fetched once and served from here), "accentColor" (#rrggbb with at least 4.5:1 contrast against white), "supportUrl"}. The sign-in, consent and related pages and e-mails of its authorization requests then show it. A free tier is refused with 403 naming the tier required.`,
    "",
    "## Machine clients (client credentials, no person)",
    `A signed-in person registers a confidential client for itself at the registration endpoint: {"client_name": "My job", "grant_types": ["client_credentials"], "token_endpoint_auth_method": "private_key_jwt", "jwks_uri": "https://..."} (or "jwks": {"keys": [...]}, or client_secret_basic for a secret). No redirect_uris. Open registration registers no machine clients.`,
    `Then POST ${at("token_endpoint", `${api}${AUTH_PATHS.token}`)} grant_type=client_credentials with client_assertion_type=urn:ietf:params:oauth:client-assertion-type:jwt-bearer and client_assertion: a JWT (RS256, ES256, EdDSA or ES256K; iss and sub your client_id, aud the issuer, exp within 5 minutes, a fresh jti each time). Add resource=${deps.issuer}/mcp for an RFC 9068 JWT our MCP server accepts. Scope service:read; no refresh token. Rotate keys by publishing them at your jwks_uri.`,
    "With a DPoP proof on that request (see below) the token is bound to your key, token_type DPoP, and /mcp then wants Authorization: DPoP with a proof.",
    "",
    "## Bind tokens to your key (DPoP, RFC 9449)",
    `Send a DPoP header with each token request: a JWT (typ dpop+jwt, the public key as jwk in its header; ES256, EdDSA or ES256K, so a Bitcoin key works) with htm POST, htu ${at("token_endpoint", `${api}${AUTH_PATHS.token}`)}, iat, a fresh jti and the server's nonce. The first try is answered use_dpop_nonce with a DPoP-Nonce header: put that nonce in the proof and send again.`,
    "The tokens come back token_type DPoP, bound to that key (cnf.jkt); a refresh needs a proof by the same key. At /mcp, userinfo and /api/backup send Authorization: DPoP <token> with a proof that also carries ath (base64url SHA-256 of the token).",
    "A client registered for private_key_jwt may sign its client assertions (RFC 7523) with ES256K too.",
    "",
    "## Sign in with a key (Bitcoin-Auth)",
    `POST ${api}/sign-in/${deps.sigmaServiceName} with the body {"bapId":"<your BAP id>"} as compact JSON, and header X-Auth-Token: a Bitcoin-Auth token (npm package bitcoin-auth) made by the identity's member key over the path ${BASE_PATH}/sign-in/${deps.sigmaServiceName} (or ${api}/sign-in/${deps.sigmaServiceName}, bound to this host) and those exact body bytes.`,
    "Token: pubkey|scheme|timestamp|requestPath|signature, scheme bsm or brc77, signed over requestPath|timestamp|sha256hex(body). Accepted within 5 minutes of its timestamp, once; canonical signatures only. The answer sets the session cookie.",
    "A Bitcoin-Auth token is not an OAuth bearer token.",
    "",
    "## Enrol an agent host (Agent Auth Protocol)",
    `1. A signed-in person creates the host: POST ${api}/host/create {"name": "..."} answers hostId and a one-time enrollmentToken.`,
    `2. The host enrols its own Ed25519 key: POST ${api}/host/enroll {"token": "<enrollmentToken>", "public_key": <JWK>}.`,
    `3. The host registers an agent with a host JWT (typ host+jwt, iss hostId, aud ${api}, a fresh jti, short exp; each jti is accepted once) as the bearer: POST ${api}/agent/register {"name", "capabilities", "reason"} with agent_public_key in the JWT. The person approves it with the user code it answers, at ${deps.issuer}/agents/approve.`,
    `4. The agent calls capabilities with an agent JWT (typ agent+jwt, sub agent id, iss hostId): ${api}/capability/list, /capability/describe, /capability/execute.`,
    deps.agentDynamicHosts ? "Hosts nobody enrolled may register themselves with an inline key here (autonomous mode)." : "Hosts must be enrolled by a person first: this server does not accept self-registered hosts.",
    `5. The host as its own OAuth client, no secret: its owner (signed in) calls POST ${deps.issuer}/api/agents/hosts/<hostId>/oauth-client, which answers a client_id (the same one every time). The host then authenticates at the token endpoint with client assertions (private_key_jwt) signed by its host key, alg EdDSA: client_credentials for machine tokens, token exchange to act for a person. A revoked or paused host's client is refused (invalid_client); a rotated host key works at once.`,
    "",
    "## Device grant (RFC 8628), for agents without a browser",
    `1. POST ${at("device_authorization_endpoint", `${api}${AUTH_PATHS.deviceCode}`)} (form: client_id, scope) answers device_code, user_code, verification_uri, interval.`,
    "2. Show the person the user code and verification_uri; they approve there.",
    `3. Poll ${at("token_endpoint", `${api}${AUTH_PATHS.token}`)} with grant_type=urn:ietf:params:oauth:grant-type:device_code, device_code and client_id no faster than interval: authorization_pending, slow_down (wait longer), access_denied or expired_token until the tokens come. The client must be registered with that grant type.`,
    "",
    "## Act for a person (token exchange, RFC 8693)",
    `An agent registered as a confidential client with grant_types including urn:ietf:params:oauth:grant-type:token-exchange trades a person's access token for its own: POST ${at("token_endpoint", `${api}${AUTH_PATHS.token}`)} with its client credentials, grant_type=urn:ietf:params:oauth:grant-type:token-exchange, subject_token=<the person's access token>, subject_token_type=urn:ietf:params:oauth:token-type:access_token, resource=${deps.issuer}/mcp (or the subject token's own resource) and optionally a narrower scope. The answer is a JWT access token whose sub is the person and whose act is {"sub": "<your client_id>"}; it never outlives or outranks the token it came from, and ends when the person revokes the app's grant.`,
    'Bind it to your own key: send a DPoP proof (as below, htu the token endpoint, with the server nonce) with the exchange and the delegated token comes back token_type DPoP with cnf.jkt of your key; use it at /mcp as Authorization: DPoP <token> with a proof that carries ath. A bad proof is invalid_dpop_proof. A subject token that is itself DPoP-bound is not exchanged.',
    `A signed-in person can register such an agent without a secret or redirect_uris: {"client_name": "My agent", "grant_types": ["urn:ietf:params:oauth:grant-type:token-exchange"], "token_endpoint_auth_method": "private_key_jwt", "jwks": {"keys": [...]}}, then authenticate each exchange with a client_assertion (ES256K, a Bitcoin key, works).`,
    "",
    "## Push the authorization request first (PAR, RFC 9126)",
    `POST ${at("pushed_authorization_request_endpoint", `${api}${AUTH_PATHS.par}`)} as a form with the authorization request's parameters (response_type=code, client_id, redirect_uri, scope, state, code_challenge, code_challenge_method=S256, resource, authorization_details) and your client authentication as at the token endpoint (a public client sends only client_id). It is checked then, and answers 201 {"request_uri": "urn:ietf:params:oauth:request_uri:...", "expires_in": ...}. Send the person's browser to ${at("authorization_endpoint", `${api}/oauth2/authorize`)}?client_id=<client_id>&request_uri=<request_uri>: it works once, for you only, until it expires (invalid_request_uri after). openid-client: buildAuthorizationUrlWithPAR.`,
    `A client registered with "require_pushed_authorization_requests": true must always push; discovery's require_pushed_authorization_requests says whether this server requires it of every client.`,
    "",
    "## Ask for exactly what you will do (authorization_details, RFC 9396)",
    'Add authorization_details (a JSON array; push it when it is large) and a resource to the authorization request. Types (discovery: authorization_details_types_supported): payment_transfer {"type": "payment_transfer", "instructedAmount": {"currency": "USD", "amount": "1000"}, "creditorAccount": {"address": "<address>"}, "creditorName"?, "remittanceInformation"?} = transfer at most that amount to that address; agent_capability {"type": "agent_capability", "capability": "<a name from /capability/list>", "constraints"?: {"<argument>": <the only value allowed>}}. Unknown types or members are invalid_authorization_details.',
    "The person sees each entry in words on the consent page. The access token (a JWT for that resource), the token response, introspection and refreshed tokens carry authorization_details; a resource server enforces them from the token. At token exchange you may narrow them (authorization_details, a subset) but never widen them.",
    "## Ask a person first (OpenID CIBA, poll or ping)",
    `Register a confidential client with grant_types including urn:openid:params:grant-type:ciba and "backchannel_token_delivery_mode": "poll" (or "ping" with "backchannel_client_notification_endpoint": "https://..."). Then POST ${at("backchannel_authentication_endpoint", `${api}${AUTH_PATHS.backchannelAuthentication}`)} with your client credentials (as at the token endpoint) and the form fields scope (must include openid), login_hint (the person's e-mail address or BAP id), binding_message (at most 100 characters; show the same text to the person), optionally acr_values=phr (the person must approve right after a passkey or identity-key sign-in), requested_expiry (seconds), authorization_details (a JSON array of objects with a string type) and, for ping, client_notification_token. The answer is auth_req_id, expires_in, interval.`,
    `The person is e-mailed a link and approves or denies on ${deps.issuer}/ciba/<id>. Poll ${at("token_endpoint", `${api}${AUTH_PATHS.token}`)} with grant_type=urn:openid:params:grant-type:ciba and auth_req_id no faster than interval: authorization_pending, slow_down (wait 5 s longer), access_denied or expired_token until the tokens come, once. In ping mode your endpoint gets POST {"auth_req_id"} with Authorization: Bearer <client_notification_token> when the person has answered; then redeem the same way. openid-client: initiateBackchannelAuthentication and pollBackchannelAuthenticationGrant. Signed requests, login_hint_token, id_token_hint and user_code are not supported.`,
    "A DPoP proof on the backchannel request (htu the backchannel endpoint) binds it: the token request must then carry a proof by the same key, and the tokens are DPoP-bound.",
    "",
    ...idJagLines(m, at("token_endpoint", `${api}${AUTH_PATHS.token}`)),
    "## Breaking changes",
    `They are announced here, in this document (${deps.issuer}${DEPRECATION_NOTICE_PATH}), and on the answers of the routes concerned: a Deprecation header (RFC 9745, @<unix seconds>), a Sunset header (RFC 8594, the removal date) and Link: <${deps.issuer}${DEPRECATION_NOTICE_PATH}>; rel="deprecation". OAuth/OIDC protocol paths are stable and never move under /v1/. Certificate type IDs and field names never change; a change needs a new type ID.`,
    "Deprecated routes:",
    ...deprecationLines(deps.deprecations),
    "",
  ].join("\n");
}

async function serveLlmsTxt(c: Ctx) {
  const { deps } = c.var;
  // Built once; a failed build is retried by the next request.
  deps.document.text ??= build(deps).catch((err: unknown) => {
    deps.document.text = undefined;
    throw err;
  });
  return c.text(await deps.document.text, 200, { "content-type": "text/plain; charset=utf-8", "cache-control": "public, max-age=300", "access-control-allow-origin": "*" });
}

/** Mounted at /llms.txt. */
export const llmsTxtRoutes = new Hono<RouteEnv<LlmsTxtDeps>>().get("/", serveLlmsTxt);
