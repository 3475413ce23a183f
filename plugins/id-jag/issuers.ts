import { createLocalJWKSet, type JSONWebKeySet, type JWTVerifyGetKey } from "jose";
import { OutboundRefused, type SafeFetch } from "../../lib/safe-fetch.js";
import { isJsonObject } from "../../lib/json.js";

/** How long a trusted issuer's key set is kept (ms), and how soon an unknown `kid` may fetch it again. */
const KEY_SET_TTL = 10 * 60 * 1000;
const REFETCH_AFTER = 30 * 1000;

/** Why a trusted issuer's keys could not be had; the message is safe to show the client. */
export class IssuerUnavailable extends Error {
  override name = "IssuerUnavailable";
}

/** RFC 8414 §3.1: the well-known URI inserted between host and path; OIDC Discovery §4 appends it. */
function discoveryUrls(issuer: string): string[] {
  const url = new URL(issuer);
  const path = url.pathname === "/" ? "" : url.pathname.replace(/\/$/, "");
  return [`${url.origin}/.well-known/oauth-authorization-server${path}`, `${url.origin}${path}/.well-known/openid-configuration`];
}

async function fetchJson(safeFetch: SafeFetch, url: string): Promise<unknown> {
  let res: Response;
  try {
    res = await safeFetch(url, { headers: { accept: "application/json" } });
  } catch (err) {
    throw new IssuerUnavailable(`${url} not fetched: ${err instanceof OutboundRefused ? err.message : "network error"}`);
  }
  if (res.status !== 200) throw new IssuerUnavailable(`${url} answered HTTP ${res.status}`);
  try {
    return await res.json();
  } catch {
    throw new IssuerUnavailable(`${url} did not answer JSON`);
  }
}

/** The issuer's `jwks_uri` from its discovery document, whose `issuer` must be the issuer itself (RFC 8414 §3.3). */
async function jwksUriOf(safeFetch: SafeFetch, issuer: string): Promise<string> {
  let last: IssuerUnavailable | undefined;
  for (const url of discoveryUrls(issuer)) {
    try {
      const doc = await fetchJson(safeFetch, url);
      if (!isJsonObject(doc) || doc.issuer !== issuer) throw new IssuerUnavailable(`${url} does not name ${issuer} as its issuer`);
      if (typeof doc.jwks_uri !== "string") throw new IssuerUnavailable(`${url} has no jwks_uri`);
      return doc.jwks_uri;
    } catch (err) {
      if (!(err instanceof IssuerUnavailable)) throw err;
      last = err;
    }
  }
  throw last ?? new IssuerUnavailable(`no discovery document for ${issuer}`);
}

interface Entry {
  fetchedAt: number;
  keys: Promise<JWTVerifyGetKey>;
}

/**
 * The key sets of the trusted issuers, found through their discovery documents and fetched
 * through the guarded fetcher (lib/safe-fetch.ts), kept for ten minutes per instance. A `kid`
 * the kept set lacks (the issuer rotated) fetches it again, at most every 30 seconds.
 */
export function trustedKeySets(safeFetch: SafeFetch) {
  const cache = new Map<string, Entry>();
  function load(issuer: string): Entry {
    const entry: Entry = {
      fetchedAt: Date.now(),
      keys: (async () => {
        const doc = await fetchJson(safeFetch, await jwksUriOf(safeFetch, issuer));
        if (!isJsonObject(doc) || !Array.isArray(doc.keys)) throw new IssuerUnavailable(`the key set of ${issuer} is not a JWK Set`);
        return createLocalJWKSet(doc as unknown as JSONWebKeySet);
      })(),
    };
    cache.set(issuer, entry);
    // A failure is not kept: the next request tries again.
    entry.keys.catch(() => cache.get(issuer) === entry && cache.delete(issuer));
    return entry;
  }
  return {
    /** The current key set of `issuer`; `fresh` asks for a new fetch (an unknown `kid`) if the kept one is old enough. */
    keys(issuer: string, fresh = false): Promise<JWTVerifyGetKey> {
      const entry = cache.get(issuer);
      const age = entry ? Date.now() - entry.fetchedAt : Infinity;
      if (!entry || age > KEY_SET_TTL || (fresh && age > REFETCH_AFTER)) return load(issuer).keys;
      return entry.keys;
    },
  };
}
