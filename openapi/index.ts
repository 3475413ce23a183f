import type { Auth } from "../auth.config.js";
import { betterAuthPaths } from "./better-auth.js";
import { SCOPES } from "../auth.config.js";
import { PROBLEM_REF, schemas, securitySchemes, type Operation, type Paths } from "./components.js";
import { ourSchemas } from "./schemas.js";
import { agentsPaths } from "./paths/agents.js";
import { authorizedAppsPaths } from "./paths/authorized-apps.js";
import { backupPaths } from "./paths/backup.js";
import { certificatePaths } from "./paths/certificates.js";
import { clientPaths } from "./paths/clients.js";
import { domainVerificationPaths } from "./paths/domain-verifications.js";
import { brandingPaths } from "./paths/branding.js";
import { jwksPaths } from "./paths/jwks.js";
import { openapiPaths } from "./paths/openapi.js";
import { adminPaths } from "./paths/admin.js";
import { profilePaths } from "./paths/profile.js";
import { subscriptionPaths } from "./paths/subscription.js";
import { walletApiPaths } from "./paths/wallet.js";
import { wellKnownPaths } from "./paths/well-known.js";

/**
 * The OpenAPI 3.1.1 description of the JSON API (spec, "Versioning"): better-auth's endpoints
 * under /api/auth, described from their own metadata (better-auth.ts), and our Hono routes,
 * one file per resource in paths/ mirroring routes/. The HTML pages (sign-in, consent, account,
 * /assets ...) are not part of the API and are not listed; tests/meta/openapi.test.ts holds the
 * document to what the app serves, in both directions.
 *
 * Adding a route: describe it in the paths/ file of its resource (or a new file, added to
 * OUR_PATHS below).
 */
const OUR_PATHS: Paths[] = [
  wellKnownPaths,
  jwksPaths,
  subscriptionPaths,
  authorizedAppsPaths,
  agentsPaths,
  backupPaths,
  profilePaths,
  walletApiPaths,
  certificatePaths,
  domainVerificationPaths,
  clientPaths,
  brandingPaths,
  openapiPaths,
  adminPaths,
];

export const OPENAPI_VERSION = "3.1.1";
export const API_VERSION = "1.0.0";

export async function buildOpenApiDocument(auth: Auth, authUrl: string) {
  const fromBetterAuth = await betterAuthPaths(auth);
  const paths: Paths = { ...fromBetterAuth.paths };
  // Ours win where both describe a path and method (we serve /api/auth/jwks in front of better-auth).
  for (const group of OUR_PATHS) for (const [path, methods] of Object.entries(group)) paths[path] = { ...paths[path], ...withEdgeAnswers(methods) };
  return {
    openapi: OPENAPI_VERSION,
    info: {
      title: "BAP identity provider",
      version: API_VERSION,
      description:
        "OAuth 2.1 / OpenID Connect authorization server with BAP (Bitcoin) identity keys. Errors outside the OAuth endpoints are RFC 9457 problems (`Problem`); the OAuth endpoints answer RFC 6749 error objects (`OAuthError`); better-auth's own endpoints answer `{message, code}`.",
    },
    servers: [{ url: authUrl }],
    paths: Object.fromEntries(Object.entries(paths).sort(([a], [b]) => a.localeCompare(b))),
    components: { schemas: { ...fromBetterAuth.schemas, ...ourSchemas, ...schemas }, securitySchemes: securitySchemes(authUrl, SCOPE_DESCRIPTIONS) },
  };
}

/** What each scope grants (the oauth2 security scheme lists them). */
const SCOPE_DESCRIPTIONS: Record<(typeof SCOPES)[number], string> = {
  openid: "An ID token and the subject (OpenID Connect).",
  profile: "The selected BAP profile: name, image, bap_id.",
  email: "The account e-mail and whether it is verified.",
  offline_access: "A refresh token.",
  "backup:read": "Read the encrypted backup's status (ciphertext only).",
  "backup:write": "Store the encrypted backup (ciphertext only).",
  "service:read": "Machine clients (client_credentials): read the service's own resources, nothing of anyone's account.",
};

const edgeProblem = (description: string) => ({ description, content: { "application/problem+json": { schema: { $ref: PROBLEM_REF } } } });

/**
 * The answers the edge gives before any of our routes runs, on every operation that reads a
 * body: 413 past the body limit, 415 for a body that is not JSON where JSON is expected.
 */
function withEdgeAnswers(methods: Record<string, Operation>): Record<string, Operation> {
  return Object.fromEntries(
    Object.entries(methods).map(([method, op]) => {
      if (method === "get" || method === "delete" || !op.requestBody) return [method, op];
      const responses = op.responses as Record<string, unknown>;
      return [method, { ...op, responses: { ...responses, 413: responses[413] ?? edgeProblem("The body is larger than the limit (1 MiB)."), 415: responses[415] ?? edgeProblem("The body is not JSON.") } }];
    }),
  );
}
