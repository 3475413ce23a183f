import type { OAuthExtensionGrantHandler, OAuthOptions } from "@better-auth/oauth-provider";
import type { JwtOptions } from "better-auth/plugins/jwt";
import { signJWT } from "better-auth/plugins/jwt";
import { randomBytes } from "node:crypto";
import type { Kysely } from "kysely";
import * as v from "valibot";
import { checkOAuthParams } from "../../lib/validate.js";
import type { Database } from "../../lib/db/tables.js";
import { AUTH_PATHS } from "../../lib/auth-endpoints.js";
import { findResourceRow } from "../oauth-store/adapter.js";
import { recordExchange } from "../oauth-store/exchanges.js";
import { isSubsetOfDetails, validateAuthorizationDetails, type AuthorizationDetail } from "../authorization-details/details.js";
import { proofBinding } from "./binding.js";
import { ACCESS_TOKEN_TYPE, activePayload, actorDepth, presentedToken, refuse, type PresentedToken } from "./subject.js";

/** RFC 8693 §2.1. */
export const TOKEN_EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange";

type ResourcePolicy = NonNullable<OAuthOptions["resourcePolicy"]>;
type ResourceRow = NonNullable<Awaited<ReturnType<ResourcePolicy["resolve"]>>>;

export interface TokenExchangeOptions {
  db: Kysely<Database>;
  /** The resource policy of plugins/resource-policy: which audiences the agent may be given. */
  policy: ResourcePolicy;
  /** This server's own resources (/mcp): a subject token bound to no resource may be narrowed to these. */
  ownResources: readonly string[];
  /** TOKEN_EXCHANGE_MAX_DEPTH: how many actors a delegated token may name. */
  maxDepth: number;
  /** The access-token claims of auth.config.ts (`bap_id` with `profile`). */
  claims: (input: { scopes: string[]; referenceId?: string }) => Record<string, unknown> | Promise<Record<string, unknown>>;
  /** The handler of requests for another token type (plugins/id-jag: identity assertions), by `requested_token_type`. */
  otherTokenTypes?: Record<string, OAuthExtensionGrantHandler>;
}

const Token = v.pipe(v.string(), v.minLength(1), v.maxLength(8192));
const TokenType = v.literal(ACCESS_TOKEN_TYPE, `only ${ACCESS_TOKEN_TYPE} is supported`);
/** RFC 8693 §2.1's parameters; the client's own (grant_type, credentials) pass through. */
const ExchangeRequest = v.looseObject({
  subject_token: Token,
  subject_token_type: TokenType,
  actor_token: v.optional(Token),
  actor_token_type: v.optional(TokenType),
  requested_token_type: v.optional(TokenType),
  resource: v.optional(v.union([v.string(), v.array(v.string())])),
  audience: v.optional(v.undefined("name the resource (RFC 8707 resource), not an audience")),
  scope: v.optional(v.pipe(v.string(), v.maxLength(2048))),
  /** RFC 9396: narrower details than the subject token's (JSON), else the subject token's own. */
  authorization_details: v.optional(v.string()),
  /** Ours: the one client that may exchange the issued token further (RFC 8693 §4.4 may_act). */
  may_act: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(255))),
});

function readRequest(body: unknown): v.InferOutput<typeof ExchangeRequest> {
  return checkOAuthParams(ExchangeRequest, body);
}

/** RFC 8693 §2.2.1 scope: a subset of the subject token's, that token's by default. */
function narrowScopes(requested: string | undefined, subject: PresentedToken): string[] {
  if (requested === undefined) return subject.scopes.filter((s) => s !== "offline_access");
  const scopes = [...new Set(requested.split(" ").filter(Boolean))];
  const extra = scopes.filter((s) => !subject.scopes.includes(s));
  if (extra.length) refuse("invalid_scope", `the subject token does not carry ${extra.join(" ")}`);
  if (!scopes.length) refuse("invalid_scope", "name at least one scope of the subject token");
  return scopes;
}

/**
 * RFC 9396 details of the delegated token: the subject token's, or a subset of them named in
 * the request (each entry covered by one the person granted: same type, account and currency,
 * no larger amount, the same pinned arguments). Details the subject token does not carry are
 * never added.
 */
function narrowDetails(requested: string | undefined, subject: PresentedToken): AuthorizationDetail[] | undefined {
  const granted = subject.authorizationDetails === undefined ? undefined : validateAuthorizationDetails(subject.authorizationDetails);
  if (granted && !granted.ok) refuse("invalid_request", "the subject token is not active");
  if (requested === undefined) return granted?.details;
  const asked = validateAuthorizationDetails(requested);
  if (!asked.ok) refuse("invalid_authorization_details", asked.description);
  if (!granted) refuse("invalid_authorization_details", "the subject token carries no authorization_details to narrow");
  if (!isSubsetOfDetails(asked.details, granted.details)) refuse("invalid_authorization_details", "authorization_details may only narrow the subject token's");
  return asked.details;
}

/** Claims the server owns (RFC 9068 §2.2, RFC 9449 `cnf`, RFC 8693 `act`): never taken from a resource's configuration. */
const SERVER_CLAIMS = new Set(["iss", "sub", "aud", "exp", "iat", "nbf", "jti", "client_id", "azp", "scope", "sid", "auth_time", "acr", "amr", "cnf", "act", "may_act", "authorization_details"]);

function resourceClaims(resource: ResourceRow): Record<string, unknown> {
  return Object.fromEntries(Object.entries(resource.customClaims ?? {}).filter(([name]) => !SERVER_CLAIMS.has(name)));
}

/**
 * The resource the delegated token is for (its `aud`, RFC 8707): the one named, else the subject
 * token's own. It never widens: a subject token bound to resources gives one of them, one bound
 * to none (this server's own token) one of this server's resources; then the resource policy
 * must give it to the agent, as it would at any other grant.
 */
async function targetResource(ctx: Parameters<OAuthExtensionGrantHandler>[0]["ctx"], options: TokenExchangeOptions, named: string | string[] | undefined, subject: PresentedToken, agentClientId: string) {
  const list = named === undefined ? [] : Array.isArray(named) ? named : [named];
  if (list.length > 1) refuse("invalid_target", "name one resource per token request (RFC 8707 §2.2)");
  const identifier = list[0] ?? (subject.resources.length === 1 ? subject.resources[0] : undefined);
  if (!identifier) refuse("invalid_target", "name the resource the delegated token is for");
  const allowed = subject.resources.length ? subject.resources : options.ownResources;
  if (!allowed.includes(identifier)) refuse("invalid_target", `the subject token does not reach ${identifier}`);
  const row = await options.policy.resolve(ctx as never, { identifier, clientId: agentClientId, resources: [identifier], row: await findResourceRow<ResourceRow>(ctx.context.adapter, identifier) });
  if (!row || row.disabled) refuse("invalid_target", `resource ${identifier} is not available`);
  return row;
}

/**
 * RFC 8693 token exchange for delegation. The agent (an authenticated confidential client
 * registered for this grant) presents a person's access token and receives an RFC 9068 JWT for
 * one resource whose `sub` is still the person and whose `act` names the agent (§4.1), nesting
 * the subject token's own `act`. The new token only narrows: its scopes, resource and expiry
 * stay within the subject token's. Each one is recorded (plugins/oauth-store/exchanges.ts), so
 * revoking the person's grant ends it. With the agent's DPoP proof it is bound to the agent's
 * key (./binding.ts, RFC 9449 §6.1).
 */
export function tokenExchangeGrant(options: TokenExchangeOptions): OAuthExtensionGrantHandler {
  return async (input) => {
    const { ctx, opts, provider } = input;
    const requestedType = (ctx.body as { requested_token_type?: unknown } | undefined)?.requested_token_type;
    const other = typeof requestedType === "string" ? options.otherTokenTypes?.[requestedType] : undefined;
    if (other) return other(input);
    const { client } = await provider.authenticateClient();
    const request = readRequest(ctx.body);
    const userInfoUrl = `${ctx.context.baseURL}${AUTH_PATHS.userinfo}`;
    // RFC 8693 §2.2.2: a subject token that is not valid is invalid_request.
    const subject = await presentedToken(provider, options.db, request.subject_token, userInfoUrl);
    if (!subject) refuse("invalid_request", "the subject token is not active");
    if (request.actor_token !== undefined) {
      if (request.actor_token_type === undefined) refuse("invalid_request", "actor_token_type is required with actor_token (RFC 8693 §2.1)");
      // The actor token is the agent's own: it proves nothing about anyone else.
      const actor = await activePayload(provider, request.actor_token);
      if (actor?.client_id !== client.clientId) refuse("invalid_request", "the actor token is not an active token of this client");
    }
    const mayAct = subject.mayAct as { sub?: unknown } | undefined;
    if (mayAct !== undefined && mayAct?.sub !== client.clientId) refuse("invalid_request", "the subject token's may_act does not name this client (RFC 8693 §4.4)");
    const depth = actorDepth(subject.act) + 1;
    if (depth > options.maxDepth) refuse("invalid_request", `the subject token is delegated ${depth - 1} times already; at most ${options.maxDepth} actors may be named`);
    const user = await ctx.context.internalAdapter.findUserById(subject.sub);
    if (!user) refuse("invalid_request", "the subject token is not active");
    // RFC 9449 §5: the agent's proof binds the delegated token to the agent's key.
    const confirmation = await proofBinding({ ctx, opts }, client);

    const resource = await targetResource(ctx, options, request.resource, subject, client.clientId);
    let scopes = narrowScopes(request.scope, subject);
    if (resource.allowedScopes) {
      scopes = scopes.filter((s) => resource.allowedScopes!.includes(s));
      if (!scopes.length) refuse("invalid_scope", `none of the requested scopes are allowed for resource ${resource.identifier}`);
    }
    const details = narrowDetails(request.authorization_details, subject);
    const iat = Math.floor(Date.now() / 1000);
    const ttl = Math.min(opts.accessTokenExpiresIn ?? 3600, resource.accessTokenTtl ?? Infinity);
    // Never a later expiry than the subject token's.
    const exp = Math.min(iat + ttl, subject.exp);
    const jti = randomBytes(24).toString("base64url");
    const act = subject.act ? { sub: client.clientId, act: subject.act } : { sub: client.clientId };
    const jwtOptions = (ctx.context.getPlugin("jwt") as { options?: JwtOptions } | null)?.options;
    const accessToken = await signJWT(ctx, {
      options: jwtOptions,
      header: { typ: "at+jwt" },
      signingAlgorithm: resource.signingAlgorithm ?? undefined,
      signingKeyId: resource.signingKeyId ?? undefined,
      payload: {
        ...(await options.claims({ scopes, referenceId: subject.bapId })),
        // A configured resource's own claims; the claims below are the server's and win.
        ...resourceClaims(resource),
        sub: subject.sub,
        aud: resource.identifier,
        client_id: client.clientId,
        azp: client.clientId,
        scope: scopes.join(" "),
        ...(subject.sid ? { sid: subject.sid } : {}),
        iss: jwtOptions?.jwt?.issuer ?? ctx.context.baseURL,
        iat,
        exp,
        jti,
        act,
        ...(request.may_act ? { may_act: { sub: request.may_act } } : {}),
        ...(details ? { authorization_details: details } : {}),
        ...(confirmation ? { cnf: confirmation } : {}),
      },
    });
    await recordExchange(options.db, { id: jti, userId: subject.sub, agentClientId: client.clientId, grantClientId: subject.grantClientId, expiresAt: new Date(exp * 1000) });
    // RFC 8693 §2.2.1.
    return ctx.json({ access_token: accessToken, issued_token_type: ACCESS_TOKEN_TYPE, token_type: confirmation ? "DPoP" : "Bearer", expires_in: exp - iat, scope: scopes.join(" "), ...(details ? { authorization_details: details } : {}) }) as never;
  };
}
