import type { Redis } from "ioredis";
import { dpopNonces, type DpopNonces } from "./lib/dpop-nonce.js";
import { bitcoinAuthPolicy, memoryReplayCache, redisReplayCache, type BitcoinAuthPolicy, type ReplayCache } from "./lib/bitcoin-auth.js";
import type { Config } from "./lib/env.js";
import { jwksCache, type JwksCache } from "./lib/jwks-cache.js";
import type { Logger } from "./lib/logger.js";
import { createMailer, type Mailer } from "./lib/mailer.js";
import { createMutualAuth, redisPeerSessions, type MutualAuth } from "./lib/mutual-auth.js";
import { createMetrics, type Metrics } from "./lib/metrics.js";
import { createLimiters, type Limiters } from "./lib/rate-limit.js";
import { createSafeFetch, type SafeFetch } from "./lib/safe-fetch.js";
import { ordinalsIndexer, type OrdinalsIndexer } from "./plugins/wallet/ordinals.js";
import { createAnalyticsCounter, type AnalyticsCounter } from "./plugins/analytics/counter.js";

/**
 * The stateful pieces that better-auth's plugins (auth.config.ts) and our own routes (app.ts)
 * share. A composition root builds them once and hands the same objects to both sides: the
 * server (server.ts), and the auth instances the db scripts build (auth.config.ts cliAuth,
 * schema/generate.ts). Nothing below the roots builds its own copy or fishes one out of another.
 */
export interface Collaborators {
  /** The signing keys behind the jwt plugin and GET /api/auth/jwks (lib/jwks-cache.ts). */
  jwks: JwksCache;
  mailer: Mailer;
  /**
   * Bitcoin-Auth policies, one per family of routes, each with its own replay records: `auth`
   * for the better-auth plugins (key sign-in and sign-up, member-key token requests, agent host
   * JWTs), `backup` for /api/backup, `profile` for /api/user and /api/bap, `wallet` for /api/wallet.
   */
  bitcoinAuth: { auth: BitcoinAuthPolicy; backup: BitcoinAuthPolicy; profile: BitcoinAuthPolicy; wallet: BitcoinAuthPolicy };
  /** Used DPoP proofs (RFC 9449 §11.1): the token endpoint's and every resource route's, one record per proof. */
  dpopReplay: ReplayCache;
  /** DPoP server nonces (RFC 9449 §8, lib/dpop-nonce.ts); null with DPOP_NONCE_LIFETIME=0. */
  dpopNonces: DpopNonces | null;
  /** The NFT indexer client (plugins/wallet/ordinals.ts) and so one NFT cache: wallet routes and the agent capability. */
  ordinals: OrdinalsIndexer;
  /**
   * The counters of every rate limit (lib/limits.ts, lib/rate-limit.ts): in Redis when there is
   * one, else in memory; null when RATE_LIMIT_ENABLED=false. better-auth's surface (auth.config.ts
   * createAuth) and our routes (app.ts) count in the same ones.
   */
  limits: Limiters | null;
  /** BRC-103 mutual authentication: the server's identity wallet and its peer sessions (in Redis when there is one, else in this process). */
  mutualAuth: MutualAuth;
  /** This instance's Prometheus metrics (lib/metrics.ts): counted by routes and plugins, served at /metrics. */
  metrics: Metrics;
  /**
   * The guarded fetcher (lib/safe-fetch.ts) for every URL someone else chose (SSRF): JWKS,
   * back-channel logout, client metadata, domain checks, the indexer, the minting service.
   * A user that needs its own deadline or size cap takes `safeFetch.withLimits(...)`.
   */
  safeFetch: SafeFetch;
  /** Per-client analytics counted in memory (plugins/analytics): by better-auth's hooks and the fast refresh, written out by server.ts's flusher. */
  analytics: AnalyticsCounter;
}

export interface CollaboratorOptions {
  config: Config;
  logger: Logger;
  redis?: Redis;
  /** In place of the SMTP mailer from the settings (tests capture mail this way). */
  mailer?: Mailer;
}

export function createCollaborators({ config, logger, redis, mailer }: CollaboratorOptions): Collaborators {
  // Without Redis the replay records live in this process only; with it every instance shares them.
  const metrics = createMetrics();
  const safeFetch = createSafeFetch({ allowPrivate: config.outboundAllowPrivate, extraCa: config.outboundExtraCa });
  const policy = (family: string, prefix: string) =>
    bitcoinAuthPolicy(redis ? redisReplayCache(redis, prefix) : memoryReplayCache(), config, () => metrics.replaysRefused.inc({ family }));
  return {
    jwks: jwksCache({ redis }),
    mailer: mailer ?? createMailer({ smtpUrl: config.smtpUrl, from: config.mailFrom, logger, disabled: config.mailDisabled }),
    bitcoinAuth: {
      auth: policy("auth", "idp:bitcoin-auth:"),
      backup: policy("backup", "idp:backup-auth:"),
      profile: policy("profile", "idp:profile-auth:"),
      wallet: policy("wallet", "idp:wallet-auth:"),
    },
    dpopReplay: redis ? redisReplayCache(redis, "idp:dpop-proof:") : memoryReplayCache(),
    dpopNonces: config.dpopNonceLifetime > 0 ? dpopNonces(config.secret, config.dpopNonceLifetime) : null,
    ordinals: ordinalsIndexer(config, safeFetch),
    limits: createLimiters(config.limits, redis),
    mutualAuth: createMutualAuth(config.serverIdentityKey, redis ? { store: redisPeerSessions(redis) } : {}),
    metrics,
    safeFetch,
    analytics: createAnalyticsCounter(),
  };
}
