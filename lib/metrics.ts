import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";

/**
 * The Prometheus metrics of one server (GET /metrics, routes/ops/metrics.ts). Each instance has its
 * own Registry, never prom-client's global one, so several servers in one process (the tests)
 * count apart. Every label takes values from a bounded set (route patterns, status codes, the
 * grant types and sign-in methods below), never raw paths or anything a caller chose.
 */
export interface Metrics {
  readonly registry: Registry;
  /** Answers by method, matched route pattern and status (lib/request-metrics.ts). */
  readonly requests: Counter<"method" | "route" | "status">;
  readonly requestDuration: Histogram<"method" | "route" | "status">;
  /** 429 answers by route. */
  readonly rateLimited: Counter<"route">;
  /** Tokens issued at the token endpoint by grant type (plugins/metrics). */
  readonly tokensIssued: Counter<"grant_type">;
  /** Sign-in attempts by method and result (plugins/metrics). */
  readonly signIns: Counter<"method" | "result">;
  /** Bitcoin-Auth tokens refused as already used, by route family (lib/bitcoin-auth.ts onReplay). */
  readonly replaysRefused: Counter<"family">;
  /** Reports a connection pool's use as gauges, read at scrape time (PostgreSQL). */
  watchPool(pool: PoolUse): void;
}

/** What a pg Pool tells about itself. */
export interface PoolUse {
  readonly totalCount: number;
  readonly idleCount: number;
  readonly waitingCount: number;
}

export const GRANT_TYPES = ["authorization_code", "refresh_token", "client_credentials", "urn:ietf:params:oauth:grant-type:device_code", "urn:ietf:params:oauth:grant-type:token-exchange"] as const;
export const SIGN_IN_METHODS = ["password", "key", "social", "passkey"] as const;

export function createMetrics(): Metrics {
  const registry = new Registry();
  // Process and runtime metrics, event-loop lag (nodejs_eventloop_lag_*) among them.
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const http = ["method", "route", "status"] as const;
  return {
    registry,
    requests: new Counter({ name: "idp_http_requests_total", help: "HTTP answers by method, route pattern and status.", labelNames: http, registers }),
    requestDuration: new Histogram({
      name: "idp_http_request_duration_seconds",
      help: "Time to answer, by method, route pattern and status.",
      labelNames: http,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    rateLimited: new Counter({ name: "idp_rate_limited_total", help: "Requests refused with 429 by a rate limit, by route pattern.", labelNames: ["route"], registers }),
    tokensIssued: new Counter({ name: "idp_tokens_issued_total", help: "Successful token endpoint answers by grant type.", labelNames: ["grant_type"], registers }),
    signIns: new Counter({ name: "idp_sign_ins_total", help: "Sign-in attempts by method (password, key, social, passkey) and result (success, failure).", labelNames: ["method", "result"], registers }),
    replaysRefused: new Counter({ name: "idp_bitcoin_auth_replays_refused_total", help: "Bitcoin-Auth tokens refused as already used, by route family.", labelNames: ["family"], registers }),
    watchPool(pool) {
      const gauge = (name: string, help: string, read: () => number) =>
        new Gauge({
          name,
          help,
          registers,
          collect() {
            this.set(read());
          },
        });
      gauge("idp_db_pool_connections", "Connections the database pool holds (busy and idle).", () => pool.totalCount);
      gauge("idp_db_pool_idle_connections", "Connections idle in the database pool.", () => pool.idleCount);
      gauge("idp_db_pool_waiting_requests", "Queries waiting for a connection from the database pool.", () => pool.waitingCount);
    },
  };
}
