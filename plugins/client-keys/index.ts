import type { BetterAuthPlugin } from "better-auth";
import { APIError, createAuthMiddleware } from "better-auth/api";
import { compactVerify, createLocalJWKSet, decodeJwt, decodeProtectedHeader } from "jose";
import { AUTH_PATHS } from "../../lib/auth-endpoints.js";
import { isJsonObject, parseJsonOrNull } from "../../lib/json.js";
import type { Logger } from "../../lib/logger.js";
import type { SafeFetch } from "../../lib/safe-fetch.js";
import { hookOn } from "../hooks.js";
import { findClientRow, updateClientRow } from "../oauth-store/adapter.js";
import { fetchKeySet, keySetUriProblem, KeySetUnavailable, managedJwksUri, withManagedJwksUri, type KeySet } from "./key-set.js";

/**
 * private_key_jwt keys published at a client's `jwks_uri` (RFC 7591 §2, RFC 7523 §2.2), fetched
 * only through the guarded fetcher. oauth-provider would fetch a registered `jwks_uri` with the
 * global fetch and accept it only on a trusted origin (ours), so a machine client could not
 * register its own. Here:
 *
 * - Registration: the set at `jwks_uri` is fetched once (a URI that gives no valid set is
 *   refused, `invalid_client_metadata`); oauth-provider registers it as the client's `jwks`, and
 *   `jwks_uri` is kept in the client's metadata (./key-set.ts managedJwksUri: never in
 *   oauth-provider's own column, which it would fetch itself) and answered instead of the set.
 * - Client authentication (token, introspection, revocation): before oauth-provider verifies an
 *   assertion, the stored set is fetched again when it is older than `cacheSeconds`, or when the
 *   assertion's key is not in it (rotation: one refetch, at most one per `refetchFloorSeconds`
 *   per client and instance). The new set is written to the client's row, so every instance
 *   verifies with it; oauth-provider then verifies the signature, `aud`, lifetime and the `jti`
 *   (single use, in the database) as for any `jwks`.
 * - A fetch that fails keeps the stored set; a key the client removed stops verifying once the
 *   set is fetched again.
 */
export interface ClientKeysOptions {
  safeFetch: SafeFetch;
  /** http on a loopback host allowed (NODE_ENV other than production). */
  development: boolean;
  logger?: Logger;
  /** How long a fetched set is used before it is fetched again (seconds). @default 300 */
  cacheSeconds?: number;
  /** Shortest time between two fetches for one client, whatever its assertions name (seconds). @default 10 */
  refetchFloorSeconds?: number;
}

/** The routes where a client authenticates with an assertion. */
export const CLIENT_AUTH_PATHS = new Set<string>([AUTH_PATHS.token, AUTH_PATHS.par, AUTH_PATHS.introspect, AUTH_PATHS.revoke]);

/** A hook matcher: a request to a client-authenticating endpoint with a `client_assertion`. */
export function carriesClientAssertion(ctx: { path?: string; body?: unknown }): boolean {
  return Boolean(ctx.path && CLIENT_AUTH_PATHS.has(ctx.path) && typeof (ctx.body as { client_assertion?: unknown } | undefined)?.client_assertion === "string");
}

interface KeyClientRow {
  clientId: string;
  jwks?: string | null;
  metadata?: unknown;
  clientDiscoveryId?: string | null;
  tokenEndpointAuthMethod?: string | null;
}

function invalidMetadata(description: string): never {
  throw new APIError("BAD_REQUEST", { error: "invalid_client_metadata", error_description: description });
}

/** The client an assertion names and the key it names, read without trusting it (only to pick the keys to verify with). */
export function assertionHints(assertion: string): { clientId: string; kid: string | null } | null {
  try {
    const payload = decodeJwt(assertion);
    const clientId = payload.sub ?? payload.iss;
    const kid = decodeProtectedHeader(assertion).kid;
    return typeof clientId === "string" && clientId ? { clientId, kid: typeof kid === "string" ? kid : null } : null;
  } catch {
    return null;
  }
}

/** Whether the stored set holds the key that signed `assertion` (its signature verifies). */
async function signedByKnownKey(assertion: string, set: KeySet | null, kid: string | null): Promise<boolean> {
  if (!set) return false;
  if (kid && !set.keys.some((key) => key.kid === kid)) return false;
  try {
    await compactVerify(assertion, createLocalJWKSet(set as Parameters<typeof createLocalJWKSet>[0]));
    return true;
  } catch {
    return false;
  }
}

export function clientKeys(options: ClientKeysOptions): BetterAuthPlugin {
  const { safeFetch } = options;
  const cacheMs = (options.cacheSeconds ?? 300) * 1000;
  const floorMs = (options.refetchFloorSeconds ?? 10) * 1000;
  /** client_id -> when its set was last fetched by this instance (ms). */
  const fetchedAt = new Map<string, number>();
  /** client_id -> when an unknown key last made this instance fetch its set (ms): the floor's clock. */
  const refetchedAt = new Map<string, number>();
  /** Registrations in flight, by request context: the `jwks_uri` to store once the client exists. */
  const pendingUri = new WeakMap<object, string>();

  /** RFC 7591 §2: `jwks` or `jwks_uri`, not both; a `jwks_uri` for private_key_jwt becomes its fetched set. */
  const takeJwksUri = hookOn(
    AUTH_PATHS.register,
    createAuthMiddleware(async (ctx) => {
      const body = isJsonObject(ctx.body) ? (ctx.body as Record<string, unknown>) : null;
      if (!body || body.jwks_uri === undefined) return;
      if (body.jwks !== undefined) invalidMetadata("jwks and jwks_uri are mutually exclusive (RFC 7591 §2)");
      if (body.token_endpoint_auth_method !== "private_key_jwt") return; // oauth-provider's own rules
      const uri = body.jwks_uri as string;
      const problem = keySetUriProblem(uri, options.development);
      if (problem) invalidMetadata(problem);
      let set: KeySet;
      try {
        set = await fetchKeySet(safeFetch, uri);
      } catch (err) {
        if (err instanceof KeySetUnavailable) invalidMetadata(err.message);
        throw err;
      }
      // In place, not through the hook's returned context: better-auth merges a returned body
      // into the request's (defu), which cannot remove a member. This plugin is listed before
      // registration-policy, whose hook copies the body after this one changed it.
      delete body.jwks_uri;
      body.jwks = set;
      pendingUri.set(ctx.context, uri);
    }),
  );

  const storeJwksUri = hookOn(
    AUTH_PATHS.register,
    createAuthMiddleware(async (ctx) => {
      const uri = pendingUri.get(ctx.context);
      const returned = ctx.context.returned as Record<string, unknown> | undefined;
      if (!uri || !returned || returned instanceof Response || typeof returned.client_id !== "string") return;
      const row = await findClientRow<KeyClientRow>(ctx.context.adapter, returned.client_id);
      await updateClientRow(ctx.context.adapter, returned.client_id, { metadata: withManagedJwksUri(row?.metadata, uri) });
      fetchedAt.set(returned.client_id, Date.now());
      const { jwks: _stored, ...answer } = returned;
      return ctx.json({ ...answer, jwks_uri: uri });
    }),
  );

  const refreshBeforeVerification = {
    matcher: carriesClientAssertion,
    handler: createAuthMiddleware(async (ctx) => {
      const assertion = (ctx.body as { client_assertion: string }).client_assertion;
      const hints = assertionHints(assertion);
      if (!hints || hints.clientId.length > 255) return; // oauth-provider answers a malformed assertion
      const row = await findClientRow<KeyClientRow>(ctx.context.adapter, hints.clientId);
      const uri = row ? managedJwksUri(row) : null;
      if (!row || !uri || row.clientDiscoveryId || row.tokenEndpointAuthMethod !== "private_key_jwt") return;
      const now = Date.now();
      const stale = now - (fetchedAt.get(row.clientId) ?? 0) > cacheMs;
      if (!stale) {
        if (now - (refetchedAt.get(row.clientId) ?? 0) < floorMs) return;
        if (await signedByKnownKey(assertion, parseJsonOrNull(row.jwks ?? null) as KeySet | null, hints.kid)) return;
        refetchedAt.set(row.clientId, now);
      }
      fetchedAt.set(row.clientId, now);
      try {
        const set = await fetchKeySet(safeFetch, uri);
        if (JSON.stringify(set) !== row.jwks) await updateClientRow(ctx.context.adapter, row.clientId, { jwks: JSON.stringify(set) });
      } catch (err) {
        if (!(err instanceof KeySetUnavailable)) throw err;
        options.logger?.warn("client jwks_uri refetch failed; the stored keys stay", { clientId: row.clientId, reason: err.message });
      }
    }),
  };

  return { id: "client-keys", hooks: { before: [takeJwksUri, refreshBeforeVerification], after: [storeJwksUri] } };
}
