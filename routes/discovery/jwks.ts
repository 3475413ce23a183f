import { Hono, type Context } from "hono";
import type { Auth } from "../../auth.config.js";
import type { JwksCache } from "../../lib/jwks-cache.js";
import { thenOrNow } from "../../lib/db/connection.js";
import type { RouteDeps, RouteEnv } from "../middleware.js";

/**
 * GET /api/auth/jwks, answered from memory: the document better-auth's jwt plugin builds
 * (`auth.api.getJwks()`, so its key filtering and shape stay upstream's), rebuilt from
 * a fresh read of the table when it is older than the key cache's TTL, and at once when
 * the key set changed since (a key created by this process, or, with Redis, by another
 * instance or the admin CLI). Staleness is therefore the one stated in lib/jwks-cache.ts:
 * none for keys created by this process, about a second for keys created elsewhere with
 * Redis, at most 30 s without it (or for rows removed by hand). Like discovery it is public and the same for
 * every caller, so it skips the per-request auth pipeline (and better-auth's rate limiter).
 */
export interface JwksDeps extends RouteDeps {
  /** The document's JSON text, from `jwksDocument(auth, cache)`. */
  document: () => string | Promise<string>;
}

/**
 * The JWKS document of `auth`, kept as described above with the shared key cache: its text at
 * once while it is current (no promise: the fast lane answers it synchronously), else a promise.
 */
export function jwksDocument(auth: Auth, cache: JwksCache): () => string | Promise<string> {
  let current: { body: Promise<string>; text?: string; until: number; generation: number } | undefined;

  function kept(): string | Promise<string> {
    const generation = cache.generation();
    if (!current || Date.now() >= current.until || current.generation !== generation) {
      cache.refresh();
      const entry: NonNullable<typeof current> = { body: auth.api.getJwks().then((jwks) => JSON.stringify(jwks)), until: Date.now() + cache.ttlMs, generation };
      current = entry;
      entry.body.then(
        (text) => {
          entry.text = text;
        },
        () => {
          if (current === entry) current = undefined;
        },
      );
    }
    return current.text ?? current.body;
  }

  return () => thenOrNow(cache.sync(), kept);
}

async function getJwks(c: Context<RouteEnv<JwksDeps>>) {
  return c.body(await c.var.deps.document(), 200, { "content-type": "application/json" });
}

/** Mounted at /api/auth/jwks; other methods go on to better-auth. */
export const jwksRoutes = new Hono<RouteEnv<JwksDeps>>().get("/", getJwks);
