import type { Kysely } from "kysely";
import type { Database } from "../../lib/db/tables.js";
import type { Logger } from "../../lib/logger.js";
import type { Mailer } from "../../lib/mailer.js";
import type { SafeFetch } from "../../lib/safe-fetch.js";

export interface CibaOptions {
  db: Kysely<Database>;
  /** Tells the person a request waits for them. */
  send: Mailer;
  /** Our approval page for one request (`/ciba/<id>`). */
  approvalUrl: (id: string) => string;
  /** CIBA_REQUEST_TTL: a request's lifetime, and the most `requested_expiry` may ask for, in seconds. @default 300 */
  ttl: number;
  /** CIBA_POLL_INTERVAL: the minimum seconds between polls (`interval`). @default 5 */
  pollInterval: number;
  /** CIBA_MAX_PENDING: requests one person may have waiting at once. @default 5 */
  maxPending: number;
  /** The guarded fetcher, for ping notifications. */
  safeFetch: SafeFetch;
  /** NODE_ENV other than production: http://localhost notification endpoints are accepted. */
  development: boolean;
  /** Key sign-in's path (`/sign-in/<SIGMA_SERVICE_NAME>`): with passkey sign-in, a strong sign-in. */
  keySignInPath: string;
  logger: Logger;
  /** Ping retries: delays before each further attempt, in ms. @default [1000, 5000, 15000] */
  pingRetryDelays?: readonly number[];
}

/** CIBA §7.1 acr_values we define: `phr`, phishing-resistant (a passkey or the identity key). */
export const STRONG_ACR = "phr";
/** Advertised in `acr_values_supported`: "0" is a plain session (oauth-provider's ID tokens say it). */
export const ACR_VALUES = ["0", STRONG_ACR] as const;
export const CIBA_GRANT = "urn:openid:params:grant-type:ciba";
