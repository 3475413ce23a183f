import { validatePublicClientJwks } from "@better-auth/oauth-provider/internal";
import { OutboundRefused, type SafeFetch } from "../../lib/safe-fetch.js";

/** A client's public keys (RFC 7517 JWK Set), as oauth-provider checks a registered `jwks`. */
export interface KeySet {
  keys: Record<string, unknown>[];
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
