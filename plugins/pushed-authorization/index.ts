import { getOAuthProviderApi, type OAuthOptions, type OAuthProviderExtension } from "@better-auth/oauth-provider";
import type { BetterAuthPlugin } from "better-auth";
import { APIError, createAuthEndpoint, createAuthMiddleware, isAPIError } from "better-auth/api";
import { generateRandomString } from "better-auth/crypto";
import { hookOn, onAuthorizationRequest } from "../hooks.js";
import { AUTH_PATHS } from "../../lib/auth-endpoints.js";
import { parseJsonOrNull } from "../../lib/json.js";
import { updateClientRow } from "../oauth-store/adapter.js";
import { checkPushedRequest, readParams, type PushedParams, type PushingClient } from "./request.js";

type EndpointContext = Parameters<typeof getOAuthProviderApi>[0];
type ProviderOptions = Parameters<typeof getOAuthProviderApi>[1];
type ResourcePolicy = NonNullable<OAuthOptions["resourcePolicy"]>;

/** RFC 9126 §2.2. */
export const REQUEST_URI_PREFIX = "urn:ietf:params:oauth:request_uri:";
/** The registration field (RFC 9126 §6), kept in the client's metadata. */
export const REQUIRE_PAR_FIELD = "require_pushed_authorization_requests";

export interface PushedAuthorizationOptions {
  /** Seconds a request_uri is good for (PAR_REQUEST_URI_TTL). */
  ttl: number;
  /** Every authorization request must be pushed (REQUIRE_PUSHED_AUTHORIZATION_REQUESTS). */
  required: boolean;
  /** The server's scopes, for a client registered without its own. */
  scopes: readonly string[];
  /** plugins/resource-policy's policy, as the authorization endpoint applies it. */
  policy: ResourcePolicy;
  /** The endpoint's public URL, for discovery. */
  endpointUrl: string;
}

/** Where a pushed request waits: better-auth's verification store (Redis when configured, else the database). */
const identifierOf = (reference: string) => `par:${reference}`;

/**
 * The endpoint in the OpenAPI document (openapi/better-auth.ts adds RFC 6749 errors and client
 * authentication). better-call's type knows JSON request bodies only; RFC 9126 §2.1 is a form.
 */
const PAR_OPENAPI = {
  description:
    "RFC 9126 pushed authorization request: the client, authenticated as at the token endpoint (a public client by client_id, with PKCE), sends the authorization request's parameters (response_type=code, redirect_uri, scope, state, code_challenge, code_challenge_method=S256, resource, authorization_details, ...) and gets a request_uri to send the browser to the authorization endpoint with client_id. It works once, and for expires_in seconds.",
  requestBody: {
    content: {
      "application/x-www-form-urlencoded": {
        schema: {
          type: "object",
          required: ["response_type", "redirect_uri"],
          properties: {
            client_id: { type: "string" },
            response_type: { type: "string", enum: ["code"] },
            redirect_uri: { type: "string" },
            scope: { type: "string" },
            state: { type: "string" },
            code_challenge: { type: "string" },
            code_challenge_method: { type: "string", enum: ["S256"] },
            resource: { type: "string" },
            authorization_details: { type: "string", description: "RFC 9396: a JSON array of authorization_details_types_supported entries" },
          },
        },
      },
    },
  },
  responses: {
    "201": {
      description: "The request is kept; send the browser to the authorization endpoint with client_id and this request_uri",
      content: {
        "application/json": {
          schema: {
            type: "object",
            required: ["request_uri", "expires_in"],
            properties: { request_uri: { type: "string", description: "urn:ietf:params:oauth:request_uri:<reference>" }, expires_in: { type: "integer" } },
          },
        },
      },
    },
  },
} as const;

interface StoredRequest {
  clientId: string;
  params: PushedParams;
}

function providerOf(ctx: { context: { getPlugin(id: string): unknown } }): ProviderOptions {
  const provider = ctx.context.getPlugin("oauth-provider") as { options: ProviderOptions } | null;
  if (!provider) throw new APIError("INTERNAL_SERVER_ERROR", { error: "server_error", error_description: "oauth-provider is not configured" });
  return provider.options;
}

/** Whether a client asked at registration to have every authorization request pushed (its metadata, an object or its JSON text). */
export function clientRequiresPar(metadata: unknown): boolean {
  const value = typeof metadata === "string" ? parseJsonOrNull(metadata) : metadata;
  return Boolean(value && typeof value === "object" && (value as Record<string, unknown>)[REQUIRE_PAR_FIELD] === true);
}

/**
 * RFC 9126 pushed authorization requests.
 *
 * - `POST /oauth2/par` (`endpoint`): the client authenticates as at the token endpoint
 *   (client_secret_basic/post, private_key_jwt; a public client by its client_id, with PKCE);
 *   the whole authorization request is checked as the authorization endpoint would
 *   (./request.ts) and kept, single use, for `ttl` seconds; the answer is 201 with
 *   `request_uri` and `expires_in`.
 * - The authorization endpoint takes `client_id` + `request_uri` and the pushed parameters
 *   only (`resolve`, oauth-provider's `requestUriResolver`): consumed once, for that client only.
 * - `require_pushed_authorization_requests`: the server's setting, and a client's own
 *   registration field (kept in its metadata); either refuses a request that was not pushed.
 */
export function pushedAuthorization(options: PushedAuthorizationOptions): {
  plugin: BetterAuthPlugin;
  extension: OAuthProviderExtension;
  resolve: NonNullable<OAuthOptions["requestUriResolver"]>;
} {
  const push = createAuthEndpoint(
    "/oauth2/par",
    { method: "POST", cloneRequest: true, metadata: { allowedMediaTypes: ["application/x-www-form-urlencoded"], openapi: PAR_OPENAPI as never } },
    async (ctx) => {
      const params = readParams(ctx.body);
      const api = getOAuthProviderApi(ctx as unknown as EndpointContext, providerOf(ctx), "authorization_code");
      const { client } = await api.authenticateClient({ requireCredentials: false });
      const kept = await checkPushedRequest(ctx as never, client as PushingClient, params, options);
      const reference = generateRandomString(43, "a-z", "A-Z", "0-9");
      const now = Date.now();
      await ctx.context.internalAdapter.createVerificationValue({
        identifier: identifierOf(reference),
        value: JSON.stringify({ clientId: client.clientId, params: kept } satisfies StoredRequest),
        expiresAt: new Date(now + options.ttl * 1000),
      });
      ctx.setStatus(201);
      ctx.setHeader("Cache-Control", "no-store");
      return ctx.json({ request_uri: `${REQUEST_URI_PREFIX}${reference}`, expires_in: options.ttl });
    },
  );

  const resolve: NonNullable<OAuthOptions["requestUriResolver"]> = async ({ requestUri, clientId, ctx }) => {
    if (!requestUri.startsWith(REQUEST_URI_PREFIX)) return null;
    const reference = requestUri.slice(REQUEST_URI_PREFIX.length);
    if (!/^[A-Za-z0-9]{43}$/.test(reference)) return null;
    // Single use: consumed here, whatever happens next (RFC 9126 §7.3).
    const row = await ctx.context.internalAdapter.consumeVerificationValue(identifierOf(reference));
    const stored = row ? (parseJsonOrNull(row.value) as StoredRequest | null) : null;
    if (!stored || stored.clientId !== clientId) return null;
    return stored.params as Record<string, string>;
  };

  // RFC 9126 §5: a request that was not pushed, where pushing is required.
  const requirePushed = onAuthorizationRequest(
    createAuthMiddleware(async (ctx) => {
      const query = (ctx.query ?? {}) as Record<string, unknown>;
      if (query.request_uri !== undefined) return;
      let required = options.required;
      if (!required && typeof query.client_id === "string" && query.client_id) {
        const client = await getOAuthProviderApi(ctx as unknown as EndpointContext, providerOf(ctx)).getClient(query.client_id);
        required = clientRequiresPar(client?.metadata);
      }
      if (!required) return;
      const errorUrl = new URL(ctx.context.options.onAPIError?.errorURL ?? `${ctx.context.baseURL}/error`);
      errorUrl.searchParams.set("error", "invalid_request");
      errorUrl.searchParams.set("error_description", "authorization requests must be pushed first (pushed_authorization_request_endpoint, RFC 9126)");
      throw ctx.redirect(errorUrl.toString());
    }),
  );

  // RFC 9126 §6 registration field. oauth-provider's registration schema drops fields it does not
  // know, so it is checked before and kept after: in the client's metadata, answered back at
  // the top level as RFC 7591 §3.2.1 asks.
  const checkRegistration = hookOn(
    AUTH_PATHS.register,
    createAuthMiddleware(async (ctx) => {
      const value = (ctx.body as Record<string, unknown> | undefined)?.[REQUIRE_PAR_FIELD];
      if (value !== undefined && typeof value !== "boolean") throw new APIError("BAD_REQUEST", { error: "invalid_client_metadata", error_description: `${REQUIRE_PAR_FIELD} must be true or false` });
    }),
  );
  const keepRegistration = hookOn(
    AUTH_PATHS.register,
    createAuthMiddleware(async (ctx) => {
      const value = (ctx.body as Record<string, unknown> | undefined)?.[REQUIRE_PAR_FIELD];
      const returned = ctx.context.returned as Record<string, unknown> | undefined;
      if (typeof value !== "boolean" || !returned || returned instanceof Response || isAPIError(returned) || typeof returned.client_id !== "string") return;
      if (value) {
        const client = await getOAuthProviderApi(ctx as unknown as EndpointContext, providerOf(ctx)).getClient(returned.client_id);
        const metadata = typeof client?.metadata === "string" ? parseJsonOrNull(client.metadata) : client?.metadata;
        await updateClientRow(ctx.context.adapter, returned.client_id, { metadata: { ...(metadata && typeof metadata === "object" ? metadata : {}), [REQUIRE_PAR_FIELD]: true } });
      }
      ctx.setStatus(201);
      return ctx.json({ ...returned, [REQUIRE_PAR_FIELD]: value });
    }),
  );

  return {
    plugin: { id: "pushed-authorization", endpoints: { pushedAuthorizationRequest: push }, hooks: { before: [requirePushed, checkRegistration], after: [keepRegistration] } },
    extension: {
      metadata: () => ({ pushed_authorization_request_endpoint: options.endpointUrl, require_pushed_authorization_requests: options.required }),
    },
    resolve,
  };
}
