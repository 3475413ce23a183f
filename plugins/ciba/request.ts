import { getOAuthProviderApi } from "@better-auth/oauth-provider";
import { createAuthEndpoint } from "better-auth/api";
import { symmetricEncrypt } from "better-auth/crypto";
import { randomBytes, randomUUID } from "node:crypto";
import * as v from "valibot";
import { AUTH_PATHS } from "../../lib/auth-endpoints.js";
import { findIdentity, isSuspended } from "../bap-identity/store.js";
import { findUserIdByEmail } from "../core-store/users.js";
import { proofBinding } from "../token-exchange/binding.js";
// RFC 9396 details of a backchannel request: checked as at the authorization endpoint, each
// entry against its type's schema, so an agent asks for exactly what the consent page allows.
import { validateAuthorizationDetails } from "../authorization-details/details.js";
import { refuse } from "./errors.js";
import { notifyPerson } from "./notify.js";
import { BACKCHANNEL_OPENAPI } from "./openapi.js";
import { CIBA_GRANT, STRONG_ACR, type CibaOptions } from "./options.js";
import { createRequest, hashAuthReqId } from "./store.js";

const Text = (max: number) => v.optional(v.pipe(v.string(), v.maxLength(max, `at most ${max} characters`)));
/** CIBA §7.1's parameters; the client's own (credentials) pass through to its authentication. */
const BackchannelRequest = v.looseObject({
  scope: v.pipe(v.string("scope is required"), v.minLength(1, "scope is required"), v.maxLength(2048)),
  login_hint: Text(320),
  login_hint_token: v.optional(v.undefined("login_hint_token is not supported: send login_hint")),
  id_token_hint: v.optional(v.undefined("id_token_hint is not supported: send login_hint")),
  binding_message: Text(200),
  acr_values: Text(512),
  client_notification_token: Text(1024),
  requested_expiry: v.optional(v.pipe(v.string(), v.regex(/^[1-9][0-9]{0,6}$/, "must be a positive whole number of seconds"))),
  authorization_details: Text(64 * 1024),
  request: v.optional(v.undefined("signed authentication requests are not supported")),
});
type BackchannelRequest = v.InferOutput<typeof BackchannelRequest>;

function readRequest(body: unknown): BackchannelRequest {
  const result = v.safeParse(BackchannelRequest, body ?? {});
  if (result.success) return result.output;
  const issue = result.issues[0];
  const field = issue.path?.map((p) => String(p.key)).join(".") ?? "request";
  refuse("invalid_request", `${field}: ${issue.message}`);
}

const EMAIL = /^[^\s@]+@[^\s@]+$/;
const BAP_ID = /^[1-9A-HJ-NP-Za-km-z]{20,64}$/;

/** `login_hint`: an e-mail address or a BAP id (in force) names the person. */
async function person(options: CibaOptions, hint: string): Promise<{ userId: string; referenceId: string | null } | null> {
  if (EMAIL.test(hint)) {
    const userId = await findUserIdByEmail(options.db, hint.toLowerCase());
    return userId ? { userId, referenceId: null } : null;
  }
  if (!BAP_ID.test(hint)) return null;
  const identity = await findIdentity(options.db, hint);
  return identity && !isSuspended(identity) ? { userId: identity.userId, referenceId: identity.bapId } : null;
}

/**
 * CIBA §7.1 binding_message: shown to the person on our page and on the client's device, so they
 * can tell the two belong together. Short, printable, one line.
 */
function bindingMessage(message: string | undefined): string | null {
  if (message === undefined || message === "") return null;
  if (message.length > 100 || /[\p{Cc}\p{Cf}\u2028\u2029]/u.test(message)) refuse("invalid_binding_message", "binding_message must be at most 100 printable characters on one line");
  return message;
}

/**
 * POST /oauth2/bc-authorize, the backchannel authentication endpoint (CIBA §7). The client
 * authenticates as at the token endpoint (confidential clients only, §4) and must be registered
 * for the CIBA grant; a DPoP proof binds the request, and so the tokens, to the proof's key.
 * The person named by `login_hint` is told by e-mail and on the account page, and decides on
 * our /ciba/<id> page. The answer is `auth_req_id`, `expires_in` and `interval` (§7.3).
 */
export function backchannelAuthentication(options: CibaOptions) {
  return createAuthEndpoint(
    AUTH_PATHS.backchannelAuthentication,
    {
      method: "POST",
      cloneRequest: true,
      metadata: {
        allowedMediaTypes: ["application/x-www-form-urlencoded"],
        // better-auth's type names JSON bodies only; this endpoint takes a form (CIBA §7.1).
        openapi: BACKCHANNEL_OPENAPI as never,
      },
    },
    async (ctx) => {
      const request = readRequest(ctx.body);
      const scopes = [...new Set(request.scope.split(" ").filter(Boolean))];
      if (!scopes.includes("openid")) refuse("invalid_scope", "scope must include openid (CIBA §7.1)");
      const opts = (ctx.context.getPlugin("oauth-provider") as { options: Parameters<typeof getOAuthProviderApi>[1] }).options;
      const provider = getOAuthProviderApi(ctx, opts, CIBA_GRANT);
      const { client } = await provider.authenticateClient({ scopes });
      const registered = client as typeof client & { backchannelTokenDeliveryMode?: string | null; backchannelClientNotificationEndpoint?: string | null };
      const ping = registered.backchannelTokenDeliveryMode === "ping" && Boolean(registered.backchannelClientNotificationEndpoint);
      if (ping && !request.client_notification_token) refuse("invalid_request", "client_notification_token is required in ping mode (CIBA §7.1)");

      let details: string | null = null;
      if (request.authorization_details !== undefined) {
        const checked = validateAuthorizationDetails(request.authorization_details);
        if (!checked.ok) refuse("invalid_authorization_details", checked.description);
        details = JSON.stringify(checked.details);
      }
      const message = bindingMessage(request.binding_message);
      const acr = request.acr_values?.split(" ").filter(Boolean) ?? [];
      if (!request.login_hint) refuse("invalid_request", "login_hint is required: the person's e-mail address or BAP id");
      const target = await person(options, request.login_hint);
      if (!target) refuse("unknown_user_id", "login_hint names no account");
      const confirmation = await proofBinding({ ctx, opts }, client);

      const ttl = Math.min(request.requested_expiry ? Number(request.requested_expiry) : options.ttl, options.ttl);
      const authReqId = randomBytes(32).toString("base64url");
      const id = randomUUID();
      const created = await createRequest(
        options.db,
        {
          id,
          authReqIdHash: hashAuthReqId(authReqId),
          clientId: client.clientId,
          userId: target.userId,
          referenceId: target.referenceId,
          scope: scopes.join(" "),
          bindingMessage: message,
          authorizationDetails: details,
          acrValues: acr.length ? acr.join(" ") : null,
          strong: acr.includes(STRONG_ACR),
          deliveryMode: ping ? "ping" : "poll",
          notificationToken: ping ? request.client_notification_token! : null,
          pingAuthReqId: ping ? await symmetricEncrypt({ key: ctx.context.secret, data: authReqId }) : null,
          dpopJkt: confirmation?.jkt ?? null,
          interval: options.pollInterval,
          expiresAt: new Date(Date.now() + ttl * 1000),
        },
        options.maxPending,
      );
      if (!created) refuse("access_denied", `this person already has ${options.maxPending} requests waiting; try again when they have answered`);
      notifyPerson(options, ctx, { id, userId: target.userId, clientName: client.name ?? client.clientId, bindingMessage: message });
      ctx.setHeader("Cache-Control", "no-store");
      return ctx.json({ auth_req_id: authReqId, expires_in: ttl, interval: options.pollInterval });
    },
  );
}
