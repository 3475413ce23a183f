import type { OAuthExtensionGrantHandler } from "@better-auth/oauth-provider";
import { isAPIError } from "better-auth/api";
import type { JwtOptions } from "better-auth/plugins/jwt";
import { signJWT, verifyJWT } from "better-auth/plugins/jwt";
import { randomBytes } from "node:crypto";
import * as v from "valibot";
import { checkOAuthParams } from "../../lib/validate.js";
import { ASSERTION_TTL, clientMappings, ID_JAG_TOKEN_TYPE, ID_JAG_TYP, refuse, type IdJagOptions } from "./options.js";

const ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token";
const ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token";

const Token = v.pipe(v.string(), v.minLength(1), v.maxLength(8192));
/** The draft's §4.3 token exchange request; the client's own parameters (grant_type, credentials) pass through. */
const AssertionRequest = v.looseObject({
  requested_token_type: v.literal(ID_JAG_TOKEN_TYPE),
  subject_token: Token,
  subject_token_type: v.picklist([ID_TOKEN_TYPE, ACCESS_TOKEN_TYPE], `subject_token_type must be ${ID_TOKEN_TYPE} or ${ACCESS_TOKEN_TYPE}`),
  audience: v.pipe(v.string("audience: name the issuer of the resource authorization server"), v.minLength(1), v.maxLength(2048)),
  resource: v.optional(v.pipe(v.string("name one resource"), v.minLength(1), v.maxLength(2048))),
  scope: v.optional(v.pipe(v.string(), v.maxLength(2048))),
  actor_token: v.optional(v.undefined("actor_token is not taken with an ID-JAG request")),
});

interface Subject {
  sub: string;
}

/**
 * The person the subject token names, when it was issued here to this client and is in force:
 * an ID token (our signature, `iss` us, `aud` the client, not expired) or an access token whose
 * introspection is active and whose `client_id` is the client. Anything else is null.
 */
async function subjectOf(input: Parameters<OAuthExtensionGrantHandler>[0], jwtOptions: JwtOptions | undefined, issuer: string, clientId: string, token: string, type: string): Promise<Subject | null> {
  if (type === ID_TOKEN_TYPE) {
    const payload = await verifyJWT(token, { ...jwtOptions, jwt: { ...jwtOptions?.jwt, issuer, audience: clientId } });
    // A back-channel logout token (OIDC Back-Channel Logout §2.4, `events`) is signed and addressed alike: never a subject.
    return payload && typeof payload.sub === "string" && payload.events === undefined ? { sub: payload.sub } : null;
  }
  try {
    const payload = (await input.provider.validateAccessToken(token)) as Record<string, unknown>;
    if (payload.active !== true || payload.client_id !== clientId || typeof payload.sub !== "string" || payload.sub === clientId) return null;
    // A token bound to a key (RFC 9449) is good only with a proof of it, which this request does not carry.
    if (payload.cnf !== undefined) return null;
    return { sub: payload.sub };
  } catch (err) {
    if (isAPIError(err)) return null;
    throw err;
  }
}

/**
 * The identity provider's side of ID-JAG (draft-ietf-oauth-identity-assertion-authz-grant §4):
 * token exchange with `requested_token_type` id-jag. The client (authenticated, registered for
 * token exchange) presents the person's ID token (or access token) that we issued to it and
 * names the resource authorization server as `audience`; the admin policy decides: the audience
 * must be one of ID_JAG_AUDIENCES, and the client must name its `client_id` there in its
 * `id_jag_clients` registration metadata. The answer is a short-lived JWT signed with our keys
 * (published at our jwks_uri) that the resource authorization server redeems by the JWT bearer
 * grant. It carries the person's e-mail only when verified here.
 */
export function issueAssertion(options: IdJagOptions): OAuthExtensionGrantHandler {
  return async (input) => {
    const { ctx, provider } = input;
    const { client } = await provider.authenticateClient();
    const request = checkOAuthParams(AssertionRequest, ctx.body);
    const jwtOptions = (ctx.context.getPlugin("jwt") as { options?: JwtOptions } | null)?.options;
    const subject = await subjectOf(input, jwtOptions, options.issuer, client.clientId, request.subject_token, request.subject_token_type);
    // RFC 8693 §2.2.2.
    if (!subject) refuse("invalid_request", "the subject token is not an active token issued to this client");
    if (!options.audiences.includes(request.audience)) refuse("invalid_target", `this server issues no identity assertions for ${request.audience}`);
    const clientIdThere = clientMappings((client as { metadata?: unknown }).metadata)[request.audience];
    if (!clientIdThere) refuse("unauthorized_client", `this client names no client_id at ${request.audience} (id_jag_clients)`);
    const user = await ctx.context.internalAdapter.findUserById(subject.sub);
    if (!user) refuse("invalid_request", "the subject token is not an active token issued to this client");
    const scopes = request.scope === undefined ? undefined : [...new Set(request.scope.split(" ").filter(Boolean))].join(" ");
    const iat = Math.floor(Date.now() / 1000);
    const exp = iat + ASSERTION_TTL;
    const assertion = await signJWT(ctx, {
      options: jwtOptions,
      header: { typ: ID_JAG_TYP },
      payload: {
        iss: options.issuer,
        sub: user.id,
        aud: request.audience,
        client_id: clientIdThere,
        jti: randomBytes(24).toString("base64url"),
        iat,
        exp,
        ...(request.resource ? { resource: request.resource } : {}),
        ...(scopes ? { scope: scopes } : {}),
        ...(user.emailVerified ? { email: user.email } : {}),
      },
    });
    // The draft §4.3.2: the assertion travels as access_token, typed N_A (it is no access token).
    return ctx.json({ access_token: assertion, issued_token_type: ID_JAG_TOKEN_TYPE, token_type: "N_A", expires_in: exp - iat, ...(scopes ? { scope: scopes } : {}) }) as never;
  };
}
