import type { Context } from "hono";
import type { Auth } from "../auth.config.js";
import type { JwksCache } from "../lib/jwks-cache.js";

/**
 * GET /api/auth/jwks, answered from memory: the document better-auth's jwt plugin builds
 * (`auth.api.getJwks()`, so its key filtering and shape stay upstream's), rebuilt from
 * a fresh read of the table when it is older than the key cache's TTL, and at once when
 * this process has created a key since. Staleness is therefore the one stated in
 * lib/jwks-cache.ts: none for keys created by this process, at most 30 s for keys
 * created or removed by another instance. Like discovery it is public and the same for
 * every caller, so it skips the per-request auth pipeline (and better-auth's rate limiter).
 */
export function jwksRoute(auth: Auth, cache: JwksCache) {
  let current: { body: Promise<string>; until: number; generation: number } | undefined;

  const document = () => {
    const generation = cache.generation();
    if (!current || Date.now() >= current.until || current.generation !== generation) {
      cache.refresh();
      const body = auth.api.getJwks().then((jwks) => JSON.stringify(jwks));
      const entry = { body, until: Date.now() + cache.ttlMs, generation };
      current = entry;
      body.catch(() => {
        if (current === entry) current = undefined;
      });
    }
    return current.body;
  };

  return async (c: Context) => c.body(await document(), 200, { "content-type": "application/json" });
}
