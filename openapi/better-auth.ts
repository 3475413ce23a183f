import { openAPI } from "better-auth/plugins";
import type { Auth } from "../auth.config.js";
import { OAUTH_ROUTES } from "../lib/error-families.js";
import { BASE_PATH } from "../lib/mount-paths.js";
import { BETTER_AUTH_REQUESTS, BETTER_AUTH_SUCCESS, CLIENT_INFORMATION } from "./better-auth-answers.js";
import { BETTER_AUTH_ERROR_REF, OAUTH_ERROR_REF, oauthErrorResponses, PROBLEM_REF, SESSION, type Operation, type Paths, type Schema } from "./components.js";

/**
 * better-auth's own endpoints, described by better-auth's OpenAPI generator (the `openAPI`
 * plugin's `generateOpenAPISchema`) from each endpoint's metadata, run once on our configured
 * instance. The plugin itself is not enabled: its routes (and its CDN-loaded reference page) are
 * not served. Paths get the mount prefix; the security names become ours; the schemas become
 * OpenAPI 3.1 (type unions with "null" where the generator writes the 3.0 `nullable`); the
 * answers the generator does not know (better-auth-answers.ts) are added; the errors are the
 * ones the service sends: RFC 6749 objects on the OAuth endpoints (lib/error-families.ts),
 * `BetterAuthError` elsewhere, and a `Problem` for a body refused at the edge.
 */
export async function betterAuthPaths(auth: Auth): Promise<{ paths: Paths; schemas: Record<string, Schema> }> {
  const generate = openAPI().endpoints.generateOpenAPISchema as unknown as (ctx: { context: unknown }) => Promise<{
    paths: Paths;
    components: { schemas: Record<string, Schema> };
  }>;
  const generated = toOpenApi31(await generate({ context: await auth.$context })) as { paths: Paths; components: { schemas: Record<string, Schema> } };
  const paths: Paths = {};
  for (const [path, methods] of Object.entries(generated.paths)) {
    const full = BASE_PATH + path;
    paths[full] = Object.fromEntries(Object.entries(methods).map(([method, op]) => [method, adapt(full, method, op)]));
  }
  const schemas = resources(generated.components.schemas);
  // list-sessions leaves each session's token out.
  const session = schemas.Session as { properties: Record<string, Schema>; required: string[] };
  const { token: _token, ...listed } = session.properties;
  schemas.ListedSession = { type: "object", description: "A session as list-sessions shows it: without its token.", properties: listed, required: session.required.filter((f) => f !== "token") };
  schemas.OAuthClientInformation = CLIENT_INFORMATION;
  return { paths, schemas };
}

/**
 * The resources of the data model (the spec's "Resources and their fields"), as the generator
 * describes the tables: a field that is not required may be null in an answer.
 */
export const RESOURCES = [
  "User",
  "Session",
  "Account",
  "OauthClient",
  "Organization",
  "Member",
  "Invitation",
  "Jwks",
  "Passkey",
  "OauthRefreshToken",
  "OauthAccessToken",
  "OauthConsent",
  "TwoFactor",
  "DeviceCode",
  "AgentHost",
  "Agent",
  "AgentCapabilityGrant",
  "ApprovalRequest",
] as const;

/** Fields of a resource that are secrets at rest: described, never sent by any route. */
const SECRET_FIELDS = new Set(["password", "privateKey", "secret", "backupCodes", "clientSecret", "accessToken", "refreshToken", "idToken", "enrollmentTokenHash", "userCodeHash"]);

function resources(all: Record<string, Schema>): Record<string, Schema> {
  const out: Record<string, Schema> = {};
  for (const name of RESOURCES) {
    const table = all[name] as { properties?: Record<string, Schema>; required?: string[] } | undefined;
    if (!table) throw new Error(`better-auth's schema has no ${name} table`);
    const required = new Set(table.required ?? []);
    const properties = Object.fromEntries(
      Object.entries(table.properties ?? {}).map(([field, schema]) => {
        let s = required.has(field) ? schema : orNull(schema);
        if (SECRET_FIELDS.has(field)) s = { ...s, writeOnly: true, description: "Stored server-side only (hashed or encrypted where it is a secret); never in an answer." };
        return [field, s];
      }),
    );
    out[name] = { ...table, properties };
  }
  return out;
}

/** The schema with null allowed too (OpenAPI 3.1: a type union, or anyOf around a $ref). */
export function orNull(schema: Schema): Schema {
  if (typeof schema.$ref === "string") return { anyOf: [{ $ref: schema.$ref }, { type: "null" }] };
  if (Array.isArray(schema.type)) return schema.type.includes("null") ? schema : { ...schema, type: [...schema.type, "null"] };
  if (typeof schema.type === "string") return { ...schema, type: [schema.type, "null"], ...(Array.isArray(schema.enum) ? { enum: [...schema.enum, null] } : {}) };
  return schema;
}

/**
 * The generator's output as OpenAPI 3.1 (JSON Schema 2020-12): `nullable: true` (3.0) becomes a
 * type union with "null"; the database type `json` becomes "any JSON value"; a `$ref` stands
 * alone (a sibling `type: object` says nothing more).
 */
export function toOpenApi31(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toOpenApi31);
  if (!value || typeof value !== "object") return value;
  const out: Schema = {};
  for (const [k, v] of Object.entries(value as Schema)) out[k] = toOpenApi31(v);
  if (typeof out.$ref === "string" && out.type === "object") delete out.type;
  if (out.type === "json") {
    delete out.type;
    out.description ??= "Any JSON value.";
  }
  if (out.nullable === true) {
    delete out.nullable;
    return orNull(out);
  }
  if (out.nullable === false) delete out.nullable;
  return out;
}

const betterAuthError = { "application/json": { schema: { $ref: BETTER_AUTH_ERROR_REF } } };
const problem = { "application/problem+json": { schema: { $ref: PROBLEM_REF } } };

/**
 * The account surface's errors. 400 is also a problem where the edge refuses a body before
 * better-auth reads it (a NUL character, JSON nested too deep); 413 is always the edge's.
 */
function betterAuthErrors(withBody: boolean): Record<string, unknown> {
  return {
    400: { description: "Bad input: missing or invalid parameters (`BetterAuthError`), or a body refused before it is read (`Problem`).", content: { ...betterAuthError, ...problem } },
    401: { description: "Not signed in, or the credential is not valid.", content: betterAuthError },
    403: { description: "Signed in, but not allowed to do this.", content: betterAuthError },
    404: { description: "No such resource (or endpoint).", content: betterAuthError },
    ...(withBody
      ? {
          413: { description: "The body is larger than 1 MiB.", content: problem },
          415: { description: "The body is not JSON (or a form where the endpoint takes one).", content: betterAuthError },
          422: { description: "The request is well-formed but cannot be carried out (for example, the user exists already).", content: betterAuthError },
        }
      : {}),
    429: { description: "Too many requests: wait for Retry-After.", content: betterAuthError },
    500: { description: "A fault on our side (the request id is logged).", content: betterAuthError },
  };
}

/** The operation with our security scheme names, tags, its success answer and the errors the service sends. */
function adapt(path: string, method: string, op: Operation): Operation {
  const tags = ((op.tags as string[] | undefined) ?? []).filter((t) => t !== "Default");
  const out: Operation = { ...op, tags: tags.length ? tags : ["better-auth"], security: SESSION };
  const generated = (op.responses ?? {}) as Record<string, unknown>;
  const success = Object.fromEntries(Object.entries(generated).filter(([status]) => /^[23]/.test(status)));
  const known = BETTER_AUTH_SUCCESS[`${method.toUpperCase()} ${path}`];
  const withBody = method !== "get" && method !== "delete";
  const oauth = OAUTH_ROUTES.has(path);
  out.responses = { ...(known ?? success), ...(oauth ? oauthErrors(path, withBody) : betterAuthErrors(withBody)) };
  if (oauth) out.security = path.endsWith("/userinfo") ? [{ bearerAuth: [] }] : [{ clientAuth: [] }, {}];
  Object.assign(out, BETTER_AUTH_REQUESTS[`${method.toUpperCase()} ${path}`]);
  if (out.description === undefined) delete out.description;
  if (out.operationId === undefined) delete out.operationId;
  return out;
}

/** An OAuth endpoint's errors: RFC 6749 objects, the edge's 413 (`invalid_request`) too. */
function oauthErrors(path: string, withBody: boolean): Record<string, unknown> {
  return {
    ...oauthErrorResponses([400, 401, 403, 404, 429, 503]),
    ...(withBody
      ? {
          // Past the limit at the edge (a declared length) a problem; counted while streaming, an RFC 6749 object.
          413: { description: "The body is larger than 1 MiB (`invalid_request`).", content: { "application/json": { schema: { $ref: OAUTH_ERROR_REF } } } },
          ...oauthErrorResponses([415]),
        }
      : {}),
  };
}
