/**
 * The checks on a client ID metadata document itself (draft-ietf-oauth-client-id-metadata-
 * document §3, §4.1), and the tolerance for what widely used clients publish. Pure functions:
 * the fetch and the cache are in index.ts.
 */

/** A metadata document's client_id URL, or the reason it cannot be one (§3). */
export function clientIdUrlProblem(clientId: string): string | null {
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    return "client_id is not a URL";
  }
  if (url.protocol !== "https:") return "client_id URL must use https";
  if (url.username || url.password) return "client_id URL must not contain credentials";
  if (clientId.includes("#")) return "client_id URL must not contain a fragment";
  // §3: a path component is required, and no single-dot or double-dot path segments.
  if (/\/\.{1,2}(\/|$|\?)|\/%2e/i.test(clientId)) return "client_id URL must not contain dot segments";
  if (url.pathname === "/") return "client_id URL must contain a path component";
  // The URL is the identifier: it must be exactly as written (no normalisation by the parser).
  if (url.href !== clientId) return "client_id URL must be in canonical form";
  return null;
}

const SHARED_SECRET_METHODS = new Set(["client_secret_basic", "client_secret_post", "client_secret_jwt"]);

/**
 * The one token endpoint auth method we register for a document. Some clients list several
 * (as an array, or under the server-metadata name `token_endpoint_auth_methods_supported`):
 * `none` wins, then `private_key_jwt` when the document carries keys. §4.1: a document cannot
 * hold a shared secret, so secret-based methods alone are refused.
 */
function authMethod(doc: Record<string, unknown>): string | { problem: string } {
  const listed = [doc.token_endpoint_auth_method, doc.token_endpoint_auth_methods_supported].flat().filter((m): m is string => typeof m === "string");
  if (!listed.length || listed.includes("none")) return "none";
  if (listed.includes("private_key_jwt") && (doc.jwks || doc.jwks_uri)) return "private_key_jwt";
  if (listed.every((m) => SHARED_SECRET_METHODS.has(m))) return { problem: "a client ID metadata document cannot use a shared secret" };
  return { problem: `unsupported token_endpoint_auth_method ${listed.join(", ")}` };
}

/** Grants a public client can use; a document may declare others (client_credentials, ...). */
const PUBLIC_GRANTS = new Set(["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code"]);

/**
 * The client metadata to register for `clientId` from the parsed `body`, or a problem.
 * Checks: a JSON object naming itself as `client_id` (§4.1), no secret (§4.1), redirect URIs
 * (what the MCP profile requires, and what exact matching at authorize needs).
 */
export function clientMetadataFrom(clientId: string, body: unknown): { metadata: Record<string, unknown> } | { problem: string } {
  if (!body || typeof body !== "object" || Array.isArray(body)) return { problem: "the metadata document is not a JSON object" };
  const doc = body as Record<string, unknown>;
  if (doc.client_id !== clientId) return { problem: "the metadata document's client_id is not the URL it was fetched from" };
  if ("client_secret" in doc || "client_secret_expires_at" in doc) return { problem: "a client ID metadata document must not contain a client_secret" };
  const uris = doc.redirect_uris;
  if (!Array.isArray(uris) || !uris.length || !uris.every((u) => typeof u === "string")) return { problem: "the metadata document must list redirect_uris" };
  const method = authMethod(doc);
  if (typeof method !== "string") return method;
  const declared = Array.isArray(doc.grant_types) ? doc.grant_types.filter((g): g is string => typeof g === "string") : ["authorization_code"];
  const grants = method === "none" ? declared.filter((g) => PUBLIC_GRANTS.has(g)) : declared;
  if (!grants.length) return { problem: "the metadata document declares no grant type this server offers a public client" };
  // `scope` is left out: the server decides what a discovered client may ask for, and a
  // document naming scopes of other servers (mcp:tools, ...) must not stop the client.
  const { token_endpoint_auth_methods_supported: _listed, scope: _scope, ...rest } = doc;
  const metadata: Record<string, unknown> = { ...rest, token_endpoint_auth_method: method, grant_types: grants };
  if (grants.includes("authorization_code") && !Array.isArray(doc.response_types)) metadata.response_types = ["code"];
  return { metadata };
}

/**
 * How long a fetched document stays fresh, in seconds, from its HTTP caching headers
 * (RFC 9111 §4.2.1: s-maxage, then max-age, then Expires - Date), held between `floor` and
 * `ceiling`. The floor also covers no-store and no-cache: one authorization (authorize,
 * consent, token) must not fetch the document three times, nor can a client make us fetch
 * it on every request.
 */
export function freshFor(headers: Headers, floor: number, ceiling: number): number {
  const directives = new Map<string, string>();
  for (const part of (headers.get("cache-control") ?? "").split(",")) {
    const [name, value = ""] = part.trim().split("=");
    if (name) directives.set(name.toLowerCase(), value.replace(/^"|"$/g, ""));
  }
  const seconds = (v: string | undefined) => (v !== undefined && /^\d+$/.test(v) ? Number(v) : undefined);
  let lifetime: number | undefined;
  if (directives.has("no-store") || directives.has("no-cache")) lifetime = 0;
  else lifetime = seconds(directives.get("s-maxage")) ?? seconds(directives.get("max-age"));
  if (lifetime === undefined && headers.get("expires")) {
    const expires = Date.parse(headers.get("expires")!);
    const date = Date.parse(headers.get("date") ?? "") || Date.now();
    lifetime = Number.isFinite(expires) ? Math.max(0, Math.floor((expires - date) / 1000)) : 0;
  }
  if (lifetime !== undefined) lifetime -= seconds(headers.get("age") ?? undefined) ?? 0;
  return Math.min(ceiling, Math.max(floor, lifetime ?? ceiling));
}
