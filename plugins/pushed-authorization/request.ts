import type { OAuthOptions } from "@better-auth/oauth-provider";
import { APIError } from "better-auth/api";
import { authorizationDetailsProblem, INVALID_AUTHORIZATION_DETAILS } from "../authorization-details/index.js";

type ResourcePolicy = NonNullable<OAuthOptions["resourcePolicy"]>;

/** A registered client as oauth-provider's getClient returns it: what a pushed request is checked against. */
export interface PushingClient {
  clientId: string;
  redirectUris?: string[] | null;
  scopes?: string[] | null;
  tokenEndpointAuthMethod?: string | null;
  requirePKCE?: boolean | null;
}

/** A pushed authorization request's parameters: strings, and `resource` that may repeat (RFC 8707). */
export type PushedParams = Record<string, string | string[]>;

function refuse(error: string, description: string): never {
  throw new APIError("BAD_REQUEST", { error, error_description: description });
}

/** RFC 9126 §2.1: every parameter once (only `resource` repeats), as text. */
export function readParams(body: unknown): PushedParams {
  if (!body || typeof body !== "object" || Array.isArray(body)) refuse("invalid_request", "send the authorization request as application/x-www-form-urlencoded parameters");
  const params: PushedParams = {};
  for (const [key, value] of Object.entries(body as Record<string, unknown>)) {
    if (typeof value === "string") params[key] = value;
    else if (key === "resource" && Array.isArray(value) && value.every((r) => typeof r === "string")) params[key] = value as string[];
    else refuse("invalid_request", `${key} must be sent once, as text`);
  }
  return params;
}

/** The client's authentication parameters are not part of the authorization request it pushes. */
const CLIENT_AUTHENTICATION = ["client_secret", "client_assertion", "client_assertion_type"];

/**
 * The authorization endpoint's rules, applied at push time (RFC 9126 §2.1: the request is
 * validated as an authorization request would be): code flow only, a redirect URI registered
 * exactly, scopes the client may ask for, PKCE S256 (always for a public client, and for any
 * client that did not opt out), resources the policy allows, valid `authorization_details`.
 * Returns what the authorization endpoint will take, the client's credentials left out.
 */
export async function checkPushedRequest(
  ctx: Parameters<ResourcePolicy["resolve"]>[0],
  client: PushingClient,
  params: PushedParams,
  { scopes, policy }: { scopes: readonly string[]; policy: ResourcePolicy },
): Promise<PushedParams> {
  if (params.request_uri !== undefined) refuse("invalid_request", "request_uri cannot be pushed (RFC 9126 §2.1)");
  if (params.request !== undefined) refuse("request_not_supported", "request objects are not supported; push the parameters themselves");
  if (params.client_id !== undefined && params.client_id !== client.clientId) refuse("invalid_request", "client_id does not name the authenticated client");
  if (params.response_type !== "code") refuse("unsupported_response_type", "response_type must be code");
  const redirect = params.redirect_uri;
  if (typeof redirect !== "string" || !(client.redirectUris ?? []).includes(redirect)) refuse("invalid_request", "redirect_uri must be one registered for this client, exactly");
  const allowed = new Set(client.scopes ?? scopes);
  const asked = typeof params.scope === "string" ? params.scope.split(" ").filter(Boolean) : [];
  const unknown = asked.filter((s) => !allowed.has(s));
  if (unknown.length) refuse("invalid_scope", `The following scopes are invalid: ${unknown.join(", ")}`);
  const method = params.code_challenge_method;
  if (method !== undefined && method !== "S256") refuse("invalid_request", "code_challenge_method must be S256");
  if ((params.code_challenge === undefined) !== (method === undefined)) refuse("invalid_request", "code_challenge and code_challenge_method must both be provided");
  if (params.code_challenge === undefined && (client.tokenEndpointAuthMethod === "none" || client.requirePKCE !== false)) refuse("invalid_request", "pkce (S256) is required for this client");
  const resources = params.resource === undefined ? [] : Array.isArray(params.resource) ? params.resource : [params.resource];
  for (const identifier of resources) {
    await policy.resolve(ctx, { identifier, clientId: client.clientId, resources, row: null as never });
  }
  const problem = authorizationDetailsProblem(params);
  if (problem) refuse(INVALID_AUTHORIZATION_DETAILS, problem);
  const kept: PushedParams = { ...params, client_id: client.clientId };
  for (const key of CLIENT_AUTHENTICATION) delete kept[key];
  // Details are per transaction: the person sees them every time (plugins/authorization-details).
  if (kept.authorization_details !== undefined) kept.prompt = "consent";
  return kept;
}
