import { getCurrentAdapter } from "@better-auth/core/context";
import type { Redis } from "ioredis";

/**
 * The signing keys, read from the `jwks` table at most once per `ttlMs` instead of on
 * every JWKS request and every token signature (the jwt plugin reads the whole table for
 * each id_token it signs).
 *
 * Staleness bound: a key created by this process is visible at once (creation clears the
 * cache). With Redis, every creation also bumps a version number there (`idp:jwks:version`),
 * and each instance compares its copy's version with it at most once per `checkMs` (one GET):
 * a key created by another instance or by `npm run admin -- keys rotate` is published and
 * used everywhere within about a second. Without Redis (or while it is unreachable) a key
 * created, or a row deleted, elsewhere is seen within `ttlMs`. Key expiry needs no refresh:
 * the jwt plugin filters on `expiresAt` against the clock on every use. Upstream accepts the
 * same order of delay: better-auth's own access-token verifier keeps a JWKS for 5 minutes and
 * refetches on an unknown `kid` after a 30 s cooldown, the default of jose's remote key sets too.
 */
export interface JwksCache {
  /** For the jwt plugin's `adapter` option: `getJwks` and `createJwk`. */
  readonly adapter: {
    getJwks(ctx: any): Promise<any[]>;
    createJwk(webKey: any, ctx: any): Promise<any>;
  };
  /** Bumped whenever the key set changed (here, or elsewhere as Redis says): documents built from the old set are stale. */
  generation(): number;
  /**
   * Asks Redis, when due, whether another process changed the keys; if so the rows are dropped
   * and `generation` bumped. A promise while a check runs, else nothing to wait for.
   */
  sync(): Promise<void> | undefined;
  /** Drops the rows, so the next read goes to the database. */
  refresh(): void;
  readonly ttlMs: number;
}

export const JWKS_CACHE_TTL_MS = 30_000;
/** How often, at most, an instance asks Redis for the key-set version. */
export const JWKS_VERSION_CHECK_MS = 1_000;
export const JWKS_VERSION_KEY = "idp:jwks:version";

export interface JwksCacheOptions {
  ttlMs?: number;
  /** Where instances tell each other that the key set changed. */
  redis?: Redis;
  checkMs?: number;
}

export function jwksCache({ ttlMs = JWKS_CACHE_TTL_MS, redis, checkMs = JWKS_VERSION_CHECK_MS }: JwksCacheOptions = {}): JwksCache {
  let rows: Promise<any[]> | undefined;
  let until = 0;
  let generation = 0;
  /** Redis's version when the rows were last read (null: none there yet, undefined: not asked). */
  let seenVersion: string | null | undefined;
  let nextCheck = 0;
  let checking: Promise<void> | undefined;

  const drop = () => {
    rows = undefined;
    generation += 1;
  };

  async function check() {
    try {
      const version = await redis!.get(JWKS_VERSION_KEY);
      if (seenVersion !== undefined && version !== seenVersion) drop();
      seenVersion = version;
    } catch {
      // Redis unreachable: the TTL still bounds staleness.
    }
  }

  const cache: JwksCache = {
    ttlMs,
    generation: () => generation,
    refresh: () => {
      rows = undefined;
    },
    sync() {
      if (!redis) return undefined;
      if (checking) return checking;
      if (Date.now() < nextCheck) return undefined;
      nextCheck = Date.now() + checkMs;
      checking = check().finally(() => {
        checking = undefined;
      });
      return checking;
    },
    adapter: {
      async getJwks(ctx) {
        // The version is read before the rows: a key inserted before the version moved is in them.
        await cache.sync();
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
          drop();
          // Tell the other instances (and bring our own version up to date without a re-read).
          if (redis) {
            try {
              seenVersion = String(await redis.incr(JWKS_VERSION_KEY));
            } catch {
              // Redis unreachable: the others see the key within ttlMs.
            }
          }
        }
      },
    },
  };
  return cache;
}
