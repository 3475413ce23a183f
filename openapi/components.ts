import { toJsonSchema } from "@valibot/to-json-schema";
import type { GenericSchema } from "valibot";
import { AUTH_PATHS } from "../lib/auth-endpoints.js";
import { BASE_PATH } from "../lib/mount-paths.js";

/**
 * The shared pieces of the OpenAPI document: the error schemas (RFC 9457 problems on our /api
 * routes, RFC 6749 error objects on the OAuth endpoints), the security schemes, and helpers the
 * per-resource files in paths/ use to describe an operation in a few lines.
 */

/** A JSON Schema object as OpenAPI 3.1 takes it (JSON Schema 2020-12). */
export type Schema = Record<string, unknown>;
/** One operation (OpenAPI Operation Object). */
export type Operation = Record<string, unknown>;
/** path -> method (lower case) -> operation. */
export type Paths = Record<string, Record<string, Operation>>;

export const PROBLEM_REF = "#/components/schemas/Problem";
export const OAUTH_ERROR_REF = "#/components/schemas/OAuthError";
export const BETTER_AUTH_ERROR_REF = "#/components/schemas/BetterAuthError";

/** RFC 9457 problem details, as lib/errors.ts and lib/respond.ts send them. */
const PROBLEM: Schema = {
  type: "object",
  description:
    "RFC 9457 problem details (application/problem+json); `code` is a stable machine-readable code from our catalog. Additional members may appear (RFC 9457 §3.2).",
  properties: {
    type: { type: "string", format: "uri-reference", default: "about:blank", description: "A URI reference naming the problem type; about:blank when it is only the status." },
    title: { type: "string", description: "Short summary of the problem type." },
    status: { type: "integer", minimum: 400, maximum: 599, description: "The HTTP status code of this answer." },
    detail: { type: "string", description: "What went wrong with this request." },
    instance: { type: "string", format: "uri-reference", description: "The request path the problem occurred at." },
    code: { type: "string", description: "Stable code from our problem catalog (docs/errors.md)." },
    errors: {
      type: "array",
      description: "Each invalid field, by JSON pointer into the request (RFC 6901), with the reason it was refused.",
      items: {
        type: "object",
        properties: { pointer: { type: "string", description: "JSON pointer to the field, e.g. `/bapId`." }, reason: { type: "string", description: "Why the value was refused." } },
        required: ["pointer", "reason"],
      },
    },
  },
  required: ["type", "title", "status"],
};

export const schemas: Record<string, Schema> = {
  Problem: PROBLEM,
  OAuthError: {
    type: "object",
    description: "RFC 6749 §5.2 error response (also RFC 6750 §3.1, RFC 7591 §3.2.2, RFC 8628 §3.5).",
    properties: { error: { type: "string" }, error_description: { type: "string" }, error_uri: { type: "string", format: "uri" } },
    required: ["error"],
  },
  BetterAuthError: {
    type: "object",
    description:
      "The account surface's error (better-auth under /api/auth outside the OAuth endpoints): `message` and a stable `code`. A request that carries a malformed signed OAuth query (`oauth_query`) is refused with `{error: \"invalid_signature\"}` instead.",
    properties: {
      message: { type: "string" },
      code: { type: "string" },
      error: { type: "string" },
      error_description: { type: "string" },
    },
    anyOf: [{ required: ["message"] }, { required: ["error"] }],
  },
};

/** The security schemes; oauth2 and openIdConnect name this deployment's endpoints. */
export function securitySchemes(authUrl: string, scopes: Record<string, string>) {
  const base = authUrl.replace(/\/$/, "") + BASE_PATH;
  const tokenUrl = base + AUTH_PATHS.token;
  return {
    apiKeyCookie: {
      type: "apiKey",
      in: "cookie",
      name: "better-auth.session_token",
      description: "The signed-in browser's session cookie (better-auth; `__Secure-better-auth.session_token` over https).",
    },
    bearerAuth: { type: "http", scheme: "bearer", description: "An OAuth access token (RFC 6750), or a better-auth session token where noted." },
    oauth2: {
      type: "oauth2",
      description: "OAuth 2.1: the authorization code flow with PKCE (S256) for people, client credentials for machine clients. Register a client first (POST /api/auth/oauth2/register, RFC 7591).",
      flows: {
        authorizationCode: { authorizationUrl: `${base}/oauth2/authorize`, tokenUrl, refreshUrl: tokenUrl, scopes },
        clientCredentials: { tokenUrl, refreshUrl: tokenUrl, scopes },
      },
    },
    openIdConnect: { type: "openIdConnect", openIdConnectUrl: `${authUrl.replace(/\/$/, "")}/.well-known/openid-configuration`, description: "OpenID Connect Discovery 1.0." },
    bitcoinAuth: {
      type: "apiKey",
      in: "header",
      name: "x-auth-token",
      description: "A Bitcoin-Auth token signed by a BAP member key (also accepted as `Authorization: Bitcoin-Auth <token>` where noted).",
    },
    bitcoinAuthorization: {
      type: "apiKey",
      in: "header",
      name: "Authorization",
      description: "`Authorization: Bitcoin-Auth <token>`: the same Bitcoin-Auth token in the Authorization header.",
    },
    mutualAuth: {
      type: "apiKey",
      in: "header",
      name: "x-bsv-auth-identity-key",
      description: "BRC-103/104 mutual authentication: shake hands at POST /.well-known/auth, then sign each request (x-bsv-auth-* headers; @bsv/sdk AuthFetch does both).",
    },
    clientAuth: { type: "http", scheme: "basic", description: "OAuth client authentication (client_secret_basic; client_secret_post and private_key_jwt in the body)." },
  } as const;
}

/** Security requirement lists, by who may call. */
export const SESSION = [{ apiKeyCookie: [] }, { bearerAuth: [] }];
export const PUBLIC: never[] = [];
export const MUTUAL_AUTH = [{ mutualAuth: [] }];

const problemContent = { "application/problem+json": { schema: { $ref: PROBLEM_REF } } };

/** The problem responses an operation gives, by status ("400": "Bad input." ...). */
export function problemResponses(described: Record<number, string>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(described).map(([status, description]) => [status, { description, content: problemContent }]));
}

/** The RFC 6749 error responses of an OAuth endpoint. */
export function oauthErrorResponses(statuses: number[]): Record<string, unknown> {
  const content = { "application/json": { schema: { $ref: OAUTH_ERROR_REF } } };
  return Object.fromEntries(statuses.map((status) => [String(status), { description: "RFC 6749 error object.", content }]));
}

/** A JSON response of this schema. */
export function jsonResponse(description: string, schema: Schema = { type: "object" }, mediaType = "application/json") {
  return { description, content: { [mediaType]: { schema } } };
}

/**
 * JSON Schema of a valibot schema (@valibot/to-json-schema). Custom checks (`v.check`) cannot be
 * expressed and are left out ("ignore"): the description says what they require.
 */
export function fromValibot(schema: GenericSchema): Schema {
  const { $schema: _dialect, ...json } = toJsonSchema(schema, { errorMode: "ignore" }) as Schema;
  return json;
}

/** A required JSON request body of this valibot schema. */
export function jsonBody(schema: GenericSchema) {
  return { required: true, content: { "application/json": { schema: fromValibot(schema) } } };
}

/** Query parameters from a valibot object schema. */
export function queryParameters(schema: GenericSchema) {
  const json = fromValibot(schema) as { properties?: Record<string, Schema>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, s]) => ({ name, in: "query", required: json.required?.includes(name) ?? false, schema: s }));
}

/** A path parameter (a string). */
export function pathParameter(name: string, description?: string) {
  return { name, in: "path", required: true, schema: { type: "string" }, ...(description ? { description } : {}) };
}

/** Common problems: 401 without a session, 400 bad input, 429 rate limited. */
export const UNAUTHORIZED = { 401: "Not signed in." };
export const BAD_INPUT = { 400: "Invalid input; `errors` names each field." };

/** A Bitcoin-Auth token in x-auth-token or in `Authorization: Bitcoin-Auth <token>` (both listed). */
export const BITCOIN_AUTH = [{ bitcoinAuth: [] }, { bitcoinAuthorization: [] }];
