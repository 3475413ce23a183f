import { validatePublicClientJwks } from "@better-auth/oauth-provider/internal";
import { OutboundRefused, type SafeFetch } from "../../lib/safe-fetch.js";
import { isPublicHttpsUrl } from "../../lib/user-facing.js";
import { isJsonObject, parseJsonOrNull } from "../../lib/json.js";

/** A client's public keys (RFC 7517 JWK Set), as oauth-provider checks a registered `jwks`. */
export interface KeySet {
  keys: Record<string, unknown>[];
}

/**
 * Where a client's managed `jwks_uri` is kept: in its metadata (oauthClient.metadata), not in
 * oauth-provider's `jwksUri` column. Given that column, oauth-provider itself refetches the set
 * with the global fetch whenever an assertion names a key it lacks, past the guarded fetcher;
 * with the column empty it only ever verifies against the stored `jwks`.
 */
const METADATA_KEY = "jwks_uri";

function metadataObject(metadata: unknown): Record<string, unknown> {
  const value = typeof metadata === "string" ? parseJsonOrNull(metadata) : metadata;
  return isJsonObject(value) ? value : {};
}

/** The `jwks_uri` this plugin manages for a client, or null. */
export function managedJwksUri(row: { metadata?: unknown }): string | null {
  const uri = metadataObject(row.metadata)[METADATA_KEY];
  return typeof uri === "string" ? uri : null;
}

/** The client's metadata with its managed `jwks_uri` set (or removed, for null). */
export function withManagedJwksUri(metadata: unknown, uri: string | null): Record<string, unknown> {
  const { [METADATA_KEY]: _old, ...rest } = metadataObject(metadata);
  return uri ? { ...rest, [METADATA_KEY]: uri } : rest;
}

/** Why `uri` cannot be a `jwks_uri` (https, no fragment; http on loopback while developing), or null. */
export function keySetUriProblem(uri: unknown, development: boolean): string | null {
  if (typeof uri === "string" && isPublicHttpsUrl(uri, { loopbackHttp: development }) && !uri.includes("#")) return null;
  return `jwks_uri must be an https URL without a fragment${development ? " (or http on a loopback host)" : ""}`;
}

/** Why a client's `jwks_uri` gave no usable key set; the message is safe to show the client. */
export class KeySetUnavailable extends Error {
  override name = "KeySetUnavailable";
}

/**
 * The key set at a client's `jwks_uri` (RFC 7591 §2), through the guarded fetcher (lib/safe-fetch.ts:
 * public addresses only, no redirects, a deadline and a size cap): 200, JSON, and only public
 * keys of the algorithms private_key_jwt verifies (oauth-provider's own check of a `jwks`).
 */
export async function fetchKeySet(safeFetch: SafeFetch, uri: string): Promise<KeySet> {
  let res: Response;
  try {
    res = await safeFetch(uri, { headers: { accept: "application/json" } });
  } catch (err) {
    throw new KeySetUnavailable(`jwks_uri not fetched: ${err instanceof OutboundRefused ? err.message : "network error"}`);
  }
  if (res.status !== 200) throw new KeySetUnavailable(`jwks_uri answered HTTP ${res.status}`);
  let body: unknown;
  try {
    body = await res.json();
  } catch {
    throw new KeySetUnavailable("jwks_uri did not answer JSON");
  }
  const checked = validatePublicClientJwks(body);
  if (!checked.valid) throw new KeySetUnavailable(`jwks_uri: ${checked.error}`);
  return { keys: checked.jwks.keys as Record<string, unknown>[] };
}

type KeyUpdate = { fields: { jwks: string; metadata: Record<string, unknown> } } | { error: "invalid_client_metadata"; error_description: string };

/**
 * RFC 7592 §2.2 for a private_key_jwt client: the PUT carries its keys as `jwks` or `jwks_uri`
 * (RFC 7591 §2: one of them), checked as registration checks them; a `jwks_uri` is fetched
 * through the guarded fetcher now, and its set stored beside it (./index.ts refetches it later).
 * Omitting both would leave the client no way to authenticate: refused, not cleared.
 */
export async function keyUpdate(safeFetch: SafeFetch, row: { metadata?: unknown }, input: Record<string, unknown>, development: boolean): Promise<KeyUpdate> {
  const refuse = (error_description: string) => ({ error: "invalid_client_metadata" as const, error_description });
  const { jwks, jwks_uri: uri } = input;
  if (jwks !== undefined && uri !== undefined) return refuse("jwks and jwks_uri are mutually exclusive (RFC 7591 §2)");
  if (jwks !== undefined) {
    const checked = validatePublicClientJwks(jwks);
    if (!checked.valid) return refuse(checked.error);
    return { fields: { jwks: JSON.stringify({ keys: checked.jwks.keys }), metadata: withManagedJwksUri(row.metadata, null) } };
  }
  if (uri === undefined) return refuse("a private_key_jwt client sends its keys as jwks or jwks_uri");
  const problem = keySetUriProblem(uri, development);
  if (problem) return refuse(problem);
  try {
    return { fields: { jwks: JSON.stringify(await fetchKeySet(safeFetch, uri as string)), metadata: withManagedJwksUri(row.metadata, uri as string) } };
  } catch (err) {
    if (err instanceof KeySetUnavailable) return refuse(err.message);
    throw err;
  }
}
