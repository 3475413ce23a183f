import { getCurrentAdapter } from "@better-auth/core/context";

/**
 * The signing keys, read from the `jwks` table at most once per `ttlMs` instead of on
 * every JWKS request and every token signature (the jwt plugin reads the whole table for
 * each id_token it signs).
 *
 * Staleness bound: a key created by this process is visible at once (creation clears the
 * cache). A key created, or a row deleted, by another instance sharing the database is
 * seen here within `ttlMs`. Key expiry needs no refresh: the jwt plugin filters on
 * `expiresAt` against the clock on every use. Upstream accepts the same order of delay:
 * better-auth's own access-token verifier keeps a JWKS for 5 minutes and refetches on an
 * unknown `kid` after a 30 s cooldown, the default of jose's remote key sets too.
 */
export interface JwksCache {
  /** For the jwt plugin's `adapter` option: `getJwks` and `createJwk`. */
  readonly adapter: {
    getJwks(ctx: any): Promise<any[]>;
    createJwk(webKey: any, ctx: any): Promise<any>;
  };
  /** Bumped whenever this process creates a key: cached documents built from the old set are stale. */
  generation(): number;
  /** Drops the rows, so the next read goes to the database. */
  refresh(): void;
  readonly ttlMs: number;
}

export const JWKS_CACHE_TTL_MS = 30_000;

export function jwksCache(ttlMs = JWKS_CACHE_TTL_MS): JwksCache {
  let rows: Promise<any[]> | undefined;
  let until = 0;
  let generation = 0;
  const cache: JwksCache = {
    ttlMs,
    generation: () => generation,
    refresh: () => {
      rows = undefined;
    },
    adapter: {
      async getJwks(ctx) {
        if (!rows || Date.now() >= until) {
          until = Date.now() + ttlMs;
          const pending = (async () => (await getCurrentAdapter(ctx.context.adapter)).findMany({ model: "jwks" }))();
          rows = pending;
          pending.catch(() => {
            if (rows === pending) rows = undefined;
          });
        }
        return rows;
      },
      async createJwk(webKey, ctx) {
        try {
          return await (await getCurrentAdapter(ctx.context.adapter)).create({ model: "jwks", data: { ...webKey, createdAt: new Date() } });
        } finally {
          rows = undefined;
          generation += 1;
        }
      },
    },
  };
  return cache;
}
