import type { BetterAuthPlugin } from "better-auth";
import { APIError, createAuthMiddleware } from "better-auth/api";
import { isCompressedPubkey } from "../../lib/bitcoin-auth.js";
import type { OAuthErrorCode } from "../../lib/errors.js";
import { displayNameProblem, isLoopbackHttp, isPublicHttpsUrl } from "../../lib/user-facing.js";
import { AUTH_PATHS } from "../../lib/auth-endpoints.js";
import { updateClientRow } from "../oauth-store/adapter.js";

const BAP_ID = /^[1-9A-HJ-NP-Za-km-z]{20,44}$/;

function isHttpLoopback(uri: unknown): boolean {
  const url = typeof uri === "string" ? URL.parse(uri) : null;
  return url ? isLoopbackHttp(url) : false;
}

/** RFC 7591 §3.2.2: a refused registration is `invalid_client_metadata`, or `invalid_redirect_uri` for a redirect URI. */
function invalidMetadata(description: string, error: OAuthErrorCode = "invalid_client_metadata"): never {
  throw new APIError("BAD_REQUEST", { error, error_description: description });
}

/** Bounds on what one registration may store (none is an RFC value; all are generous). */
const MAX_LIST = 20;
const MAX_URI = 2048;
const MAX_STRING: Record<string, number> = {
  client_name: 200,
  client_uri: MAX_URI,
  logo_uri: MAX_URI,
  tos_uri: MAX_URI,
  policy_uri: MAX_URI,
  jwks_uri: MAX_URI,
  backchannel_logout_uri: MAX_URI,
  software_id: 200,
  software_version: 200,
  software_statement: 8192,
  scope: 1000,
};
const LISTS = ["redirect_uris", "post_logout_redirect_uris", "contacts", "grant_types", "response_types", "resources"] as const;
const LIST_ITEM_MAX: Record<(typeof LISTS)[number], number> = {
  redirect_uris: MAX_URI,
  post_logout_redirect_uris: MAX_URI,
  contacts: 320,
  grant_types: 100,
  response_types: 100,
  resources: MAX_URI,
};

/** Links shown on the consent page or fetched by us: https only (loopback http while developing). */
const INFO_URIS = ["client_uri", "logo_uri", "tos_uri", "policy_uri", "jwks_uri"] as const;
/** A client's own keys (RFC 7591 §2 `jwks`): enough for rotation, not a storage service. */
const MAX_JWKS_KEYS = 10;
const MAX_JWKS_BYTES = 8 * 1024;

function checkSizes(body: Record<string, unknown>) {
  for (const [field, max] of Object.entries(MAX_STRING)) {
    const value = body[field];
    if (typeof value === "string" && value.length > max) invalidMetadata(`${field} is longer than ${max} characters`);
  }
  for (const field of LISTS) {
    const value = body[field];
    if (!Array.isArray(value)) continue;
    const error: OAuthErrorCode = field.endsWith("redirect_uris") ? "invalid_redirect_uri" : "invalid_client_metadata";
    if (value.length > MAX_LIST) invalidMetadata(`${field} may list at most ${MAX_LIST} values`, error);
    if (value.some((item) => typeof item === "string" && item.length > LIST_ITEM_MAX[field])) invalidMetadata(`a value of ${field} is longer than ${LIST_ITEM_MAX[field]} characters`, error);
  }
}

function checkJwks(jwks: unknown) {
  if (jwks === undefined || jwks === null) return;
  const keys = (jwks as { keys?: unknown }).keys;
  if (Array.isArray(keys) && keys.length > MAX_JWKS_KEYS) invalidMetadata(`jwks may hold at most ${MAX_JWKS_KEYS} keys`);
  if (Buffer.byteLength(JSON.stringify(jwks) ?? "") > MAX_JWKS_BYTES) invalidMetadata(`jwks is larger than ${MAX_JWKS_BYTES} bytes`);
}

function checkDisplayed(body: Record<string, unknown>, development: boolean) {
  for (const field of INFO_URIS) {
    const value = body[field];
    if (typeof value === "string" && !isPublicHttpsUrl(value, { loopbackHttp: development, maxLength: MAX_URI })) {
      invalidMetadata(`${field} must be an https URL${development ? " (or http on a loopback host)" : ""}`);
    }
  }
  if (typeof body.client_name === "string") {
    const problem = displayNameProblem(body.client_name, MAX_STRING.client_name!);
    if (problem) invalidMetadata(`client_name ${problem}`);
  }
}

/** The routes that write a client's metadata, and where each carries it. */
const CLIENT_WRITES: Record<string, (body: Record<string, unknown>) => unknown> = {
  [AUTH_PATHS.register]: (body) => body,
  "/oauth2/create-client": (body) => body,
  "/oauth2/update-client": (body) => body.update,
};

/**
 * The bounds every client write obeys, whichever door it comes through: dynamic registration,
 * a signed-in person's create-client, or update-client (which would otherwise let a client
 * registered within the bounds grow past them).
 */
export function checkClientMetadata(metadata: unknown, development: boolean) {
  if (!metadata || typeof metadata !== "object" || Array.isArray(metadata)) return;
  const body = metadata as Record<string, unknown>;
  checkSizes(body);
  checkJwks(body.jwks);
  checkDisplayed(body, development);
}

/**
 * Dynamic registration (RFC 7591) beyond what oauth-provider enforces (https redirect URIs,
 * no fragments, exact matching):
 * - the extension members `member_pubkey` (compressed secp256k1 key, hex) and `owner_bap_id`
 *   are validated, stored as `memberPubkey` / `ownerBapId`, and echoed back;
 * - `public` and `type` are recorded from the auth method and application type;
 * - a registration whose redirect URIs are all http on a loopback host and that names no
 *   application_type is a native client (RFC 8252 §7.3), the only client type for which the
 *   provider accepts them; while developing (NODE_ENV other than production) so is one that
 *   says `web`;
 * - on register, create-client and update-client alike: sizes and list lengths are bounded,
 *   `jwks` holds at most 10 keys in 8 KiB, client_uri, logo_uri, tos_uri, policy_uri and
 *   jwks_uri are https (loopback http while developing), and client_name has no control or
 *   bidirectional control characters (RFC 7591 §2 leaves these to the server's policy).
 */
export function registrationPolicy(options: { development: boolean }) {
  const isRegistration = (ctx: { path?: string }) => ctx.path === AUTH_PATHS.register;
  return {
    id: "registration-policy",
    hooks: {
      before: [
        {
          matcher: (ctx) => Object.hasOwn(CLIENT_WRITES, ctx.path ?? ""),
          handler: createAuthMiddleware(async (ctx) => {
            const body = ctx.body as Record<string, unknown> | undefined;
            if (!body || typeof body !== "object" || Array.isArray(body)) return;
            checkClientMetadata(CLIENT_WRITES[ctx.path!]!(body), options.development);
          }),
        },
        {
          matcher: isRegistration,
          handler: createAuthMiddleware(async (ctx) => {
            const body = ctx.body as Record<string, unknown> | undefined;
            if (!body || typeof body !== "object" || Array.isArray(body)) return;
            if (body.member_pubkey !== undefined && !isCompressedPubkey(body.member_pubkey)) {
              invalidMetadata("member_pubkey must be a compressed secp256k1 public key in hex");
            }
            if (body.owner_bap_id !== undefined && (typeof body.owner_bap_id !== "string" || !BAP_ID.test(body.owner_bap_id))) {
              invalidMetadata("owner_bap_id must be a BAP identity key (base58)");
            }
            const uris = body.redirect_uris;
            // Only loopback http redirect URIs and no application_type: a native app (RFC 8252
            // §7.3), the way common MCP and CLI clients register; better-auth's default, `web`,
            // would refuse them. An explicit `web` stays web outside development.
            const loopbackOnly = Array.isArray(uris) && uris.length > 0 && uris.every(isHttpLoopback);
            const nativeApp = loopbackOnly && (body.application_type === undefined || (options.development && body.application_type === "web"));
            if (nativeApp) return { context: { body: { ...body, application_type: "native" } } };
          }),
        },
      ],
      after: [
        {
          matcher: isRegistration,
          handler: createAuthMiddleware(async (ctx) => {
            const returned = ctx.context.returned as Record<string, unknown> | undefined;
            if (!returned || returned instanceof Response || typeof returned.client_id !== "string") return;
            const body = (ctx.body ?? {}) as Record<string, unknown>;
            const extension = {
              ...(typeof body.member_pubkey === "string" ? { member_pubkey: body.member_pubkey } : {}),
              ...(typeof body.owner_bap_id === "string" ? { owner_bap_id: body.owner_bap_id } : {}),
            };
            await updateClientRow(ctx.context.adapter, returned.client_id, {
              memberPubkey: extension.member_pubkey ?? null,
              ownerBapId: extension.owner_bap_id ?? null,
              public: returned.token_endpoint_auth_method === "none",
              type: typeof returned.application_type === "string" ? returned.application_type : "web",
            });
            if (Object.keys(extension).length) return ctx.json({ ...returned, ...extension });
          }),
        },
      ],
    },
  } satisfies BetterAuthPlugin;
}
