import { toJsonSchema } from "@valibot/to-json-schema";
import type { GenericSchema } from "valibot";

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

export const schemas: Record<string, Schema> = {
  Problem: {
    type: "object",
    description: "RFC 9457 problem details (application/problem+json); `code` is a stable machine-readable code from our catalog.",
    properties: {
      type: { type: "string", default: "about:blank" },
      title: { type: "string" },
      status: { type: "integer" },
      detail: { type: "string" },
      instance: { type: "string" },
      code: { type: "string" },
      errors: {
        type: "array",
        description: "Each invalid field, by JSON pointer.",
        items: { type: "object", properties: { pointer: { type: "string" }, detail: { type: "string" } } },
      },
    },
    required: ["type", "title", "status"],
  },
  OAuthError: {
    type: "object",
    description: "RFC 6749 §5.2 error response.",
    properties: { error: { type: "string" }, error_description: { type: "string" }, error_uri: { type: "string" } },
    required: ["error"],
  },
};

export const securitySchemes = {
  sessionCookie: { type: "apiKey", in: "cookie", name: "better-auth.session_token", description: "The signed-in browser's session cookie (better-auth; `__Secure-better-auth.session_token` over https)." },
  bearer: { type: "http", scheme: "bearer", description: "An OAuth access token (RFC 6750), or a better-auth session token where noted." },
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

/** Security requirement lists, by who may call. */
export const SESSION = [{ sessionCookie: [] }, { bearer: [] }];
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
