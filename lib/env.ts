import { randomBytes } from "node:crypto";
import { resolve } from "node:path";
import { PrivateKey } from "@bsv/sdk";
import * as v from "valibot";
import { LIMITS, limitPoints, type LimitSetting } from "./limits.js";
import { ConfigError } from "./config-error.js";
import { keptFile, readCaFile } from "./provision.js";
import { parseSocialSettings, type SocialSettings } from "./social-env.js";

export { ConfigError };

/**
 * Every setting the service reads, validated once at start-up by one pure function
 * (`parseSettings`: no file is read or written); `provision` then fills in what lives in files
 * (lib/provision.ts: the development secret, the generated identity key, extra CAs) and gives
 * the `Config`, whose type is the schema's output (`Settings`) with those three in hand.
 * Nothing else in the project reads `process.env`: the frozen `Config` is passed down through
 * factories. `.env.example` and docs/configuration.md list each key of `EnvSchema` with its
 * default (tests/meta/settings.test.ts).
 */
const Bool = v.pipe(
  v.optional(v.picklist(["true", "false", "1", "0", ""]), ""),
  v.transform((s) => s === "true" || s === "1"),
);
const Seconds = (fallback: number) =>
  v.pipe(
    v.optional(v.string(), String(fallback)),
    v.transform(Number),
    v.integer("must be a whole number of seconds"),
    v.minValue(1, "must be at least 1"),
  );

/** Issuer identifiers, comma-separated: each an http(s) URL without query or fragment (RFC 8414 §2). */
function issuerList(value: string): string[] {
  return value.split(",").map((s) => s.trim()).filter(Boolean);
}
const IssuerList = v.optional(
  v.pipe(
    v.string(),
    v.check((value) => issuerList(value).every((issuer) => URL.canParse(issuer) && /^https?:\/\/[^?#]+$/.test(issuer)), "must be a comma-separated list of issuer URLs (http(s), no query or fragment)"),
  ),
);

/** A rate limit's budget (lib/limits.ts), a whole number of requests per its window. */
const Requests = (fallback: number) =>
  v.pipe(v.optional(v.string(), String(fallback)), v.transform(Number), v.integer("must be a whole number of requests"), v.minValue(1, "must be at least 1"));
/** One setting per overridable limit of lib/limits.ts, its default the table's. */
const LIMIT_SETTINGS = Object.fromEntries(
  Object.values(LIMITS).flatMap((rule) => (rule.setting ? [[rule.setting, Requests(rule.points)]] : [])),
) as Record<LimitSetting, ReturnType<typeof Requests>>;

const PriceId = v.pipe(v.string(), v.regex(/^price_[A-Za-z0-9]+$/, "must be a Stripe price id (price_...)"));
/** A 1Sat collection id: the outpoint of the collection's inscription, as its items' MAP data names it. */
const CollectionId = v.pipe(v.string(), v.regex(/^[0-9a-f]{64}_\d+$/, "must be a 1Sat collection id (txid_vout)"));

export const EnvSchema = v.object({
  NODE_ENV: v.optional(v.picklist(["development", "production", "test"]), "development"),
  PORT: v.pipe(v.optional(v.string(), "3000"), v.transform(Number), v.integer(), v.minValue(0), v.maxValue(65535)),
  HOST: v.optional(v.string(), "0.0.0.0"),
  AUTH_URL: v.optional(v.pipe(v.string(), v.url("must be an absolute URL"))),
  DATABASE_URL: v.optional(v.string(), "./data/idp.sqlite"),
  BETTER_AUTH_SECRET: v.optional(v.pipe(v.string(), v.minLength(32, "must be at least 32 characters"))),
  REDIS_URL: v.optional(v.pipe(v.string(), v.regex(/^rediss?:\/\//, "must be a redis:// or rediss:// URL"))),
  LOG_LEVEL: v.optional(v.picklist(["debug", "info", "warn", "error", "silent"]), "info"),
  AUTO_MIGRATE: v.optional(v.picklist(["true", "false", ""]), ""),
  SMTP_URL: v.optional(v.string()),
  MAIL_FROM: v.optional(v.string(), "Identity <no-reply@localhost>"),
  MAIL_DISABLED: Bool,
  SUPPORT_EMAIL: v.optional(v.pipe(v.string(), v.maxLength(320), v.email("must be an e-mail address"))),
  SERVICE_DISPLAY_NAME: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(64, "must be at most 64 characters"), v.regex(/^[^\u0000-\u001f\u007f<>]+$/, "must be one line without < or >")), "Identity"),
  PRIVACY_POLICY_URL: v.optional(v.pipe(v.string(), v.url("must be an absolute URL"))),
  TERMS_OF_SERVICE_URL: v.optional(v.pipe(v.string(), v.url("must be an absolute URL"))),
  BRANDING_LOGO_MAX_BYTES: v.pipe(v.optional(v.string(), String(256 * 1024)), v.transform(Number), v.integer("must be a whole number of bytes"), v.minValue(1024), v.maxValue(2 * 1024 * 1024)),
  REQUIRE_EMAIL_VERIFICATION: Bool,
  TRUST_PROXY: Bool,
  TRUST_PROXY_HOPS: v.optional(v.pipe(v.string(), v.transform(Number), v.integer("must be a whole number of proxies"), v.minValue(0), v.maxValue(16))),
  DATA_DIR: v.optional(v.string(), "./data"),
  ACCESS_TOKEN_TTL: Seconds(3600),
  REFRESH_TOKEN_TTL: Seconds(604800),
  AUTH_CODE_TTL: Seconds(600),
  ID_TOKEN_TTL: Seconds(3600),
  REFRESH_REUSE_GRACE_SECONDS: v.pipe(v.optional(v.string(), "0"), v.transform(Number), v.integer("must be a whole number of seconds"), v.minValue(0), v.maxValue(300, "must be at most 300 (a retry, not a second life)")),
  ANONYMOUS_CLIENT_TTL_DAYS: v.pipe(v.optional(v.string(), "30"), v.transform(Number), v.integer("must be a whole number of days"), v.minValue(0), v.maxValue(3650)),
  ANALYTICS_FLUSH_MS: v.pipe(v.optional(v.string(), "5000"), v.transform(Number), v.integer("must be a whole number of milliseconds"), v.minValue(50), v.maxValue(300_000)),
  AUDIT_LOG_RETENTION_DAYS: v.pipe(v.optional(v.string(), "365"), v.transform(Number), v.integer("must be a whole number of days"), v.minValue(0), v.maxValue(36500)),
  RATE_LIMIT_ENABLED: v.optional(v.picklist(["true", "false", ""]), ""),
  SIGMA_SERVICE_NAME: v.optional(v.pipe(v.string(), v.regex(/^[a-z0-9-]+$/)), "sigma"),
  KEY_SIGN_IN_SKIPS_TWO_FACTOR: Bool,
  BACKUP_MAX_BYTES: v.pipe(v.optional(v.string(), String(5 * 1024 * 1024)), v.transform(Number), v.integer("must be a whole number of bytes"), v.minValue(1024), v.maxValue(64 * 1024 * 1024)),
  DEVICE_CODE_TTL: Seconds(600),
  DEVICE_POLL_INTERVAL: Seconds(5),
  CIBA_REQUEST_TTL: v.pipe(v.optional(v.string(), "300"), v.transform(Number), v.integer("must be a whole number of seconds"), v.minValue(30), v.maxValue(3600, "must be at most 3600 (an hour)")),
  CIBA_POLL_INTERVAL: v.pipe(v.optional(v.string(), "5"), v.transform(Number), v.integer("must be a whole number of seconds"), v.minValue(1), v.maxValue(60)),
  CIBA_MAX_PENDING: v.pipe(v.optional(v.string(), "5"), v.transform(Number), v.integer("must be a whole number of requests"), v.minValue(1), v.maxValue(100)),
  TOKEN_EXCHANGE_MAX_DEPTH: v.pipe(v.optional(v.string(), "3"), v.transform(Number), v.integer("must be a whole number of delegation levels"), v.minValue(1), v.maxValue(10)),
  ID_JAG_AUDIENCES: IssuerList,
  ID_JAG_TRUSTED_ISSUERS: IssuerList,
  PAR_REQUEST_URI_TTL: v.pipe(v.optional(v.string(), "60"), v.transform(Number), v.integer("must be a whole number of seconds"), v.minValue(1), v.maxValue(600)),
  REQUIRE_PUSHED_AUTHORIZATION_REQUESTS: Bool,
  DPOP_NONCE_LIFETIME: v.pipe(v.optional(v.string(), "300"), v.transform(Number), v.integer("must be a whole number of seconds"), v.minValue(0), v.maxValue(3600)),
  AGENT_DYNAMIC_HOSTS: Bool,
  OUTBOUND_ALLOW_PRIVATE: Bool,
  OUTBOUND_EXTRA_CA_FILE: v.optional(v.string()),
  DNS_RESOLVER_SERVERS: v.optional(v.pipe(v.string(), v.regex(/^[0-9a-fA-F.:\[\], ]+$/, "must be a comma-separated list of IP addresses, each with an optional :port"))),
  DOMAIN_VERIFICATION_CHALLENGE_TTL: Seconds(7 * 24 * 3600),
  DOMAIN_VERIFICATION_VALIDITY: Seconds(90 * 24 * 3600),
  DOMAIN_VERIFICATION_HTTPS_PORT: v.pipe(v.optional(v.string(), "443"), v.transform(Number), v.integer(), v.minValue(1), v.maxValue(65535)),
  DOMAIN_VERIFICATION_MAX_PENDING: v.pipe(v.optional(v.string(), "20"), v.transform(Number), v.integer("must be a whole number of verifications"), v.minValue(1), v.maxValue(1000)),
  CLIENT_METADATA_TIMEOUT: v.pipe(v.optional(v.string(), "5000"), v.transform(Number), v.integer("must be a whole number of milliseconds"), v.minValue(100), v.maxValue(30_000)),
  ORDINALS_API_URL: v.optional(v.pipe(v.string(), v.url("must be an absolute URL"), v.regex(/^https?:\/\//, "must be an http(s) URL")), "https://ordinals.gorillapool.io"),
  ORDINALS_API_TIMEOUT: v.pipe(v.optional(v.string(), "5000"), v.transform(Number), v.integer("must be a whole number of milliseconds"), v.minValue(100), v.maxValue(30_000)),
  BITCOIN_AUTH_REQUIRE_HOST_BINDING: Bool,
  WALLET_CONNECT_ALLOW_PATH_ONLY: Bool,
  EMAIL_CHANGE_REAUTH_WINDOW: Seconds(300),
  KEEP_OAUTH_GRANTS_ON_PASSWORD_RESET: Bool,
  STRIPE_SECRET_KEY: v.optional(v.pipe(v.string(), v.regex(/^(sk|rk)_/, "must be a Stripe secret or restricted key (sk_... or rk_...)"))),
  STRIPE_WEBHOOK_SECRET: v.optional(v.pipe(v.string(), v.regex(/^whsec_/, "must be a Stripe webhook signing secret (whsec_...)"))),
  STRIPE_PRICE_PLUS: v.optional(PriceId),
  STRIPE_PRICE_PLUS_ANNUAL: v.optional(PriceId),
  STRIPE_PRICE_PRO: v.optional(PriceId),
  STRIPE_PRICE_PRO_ANNUAL: v.optional(PriceId),
  STRIPE_API_BASE_URL: v.optional(v.pipe(v.string(), v.url("must be an absolute URL"), v.regex(/^https?:\/\/[^/]+\/?$/, "must be http(s)://host[:port] without a path"))),
  MINT_SERVICE_URL: v.optional(v.pipe(v.string(), v.url("must be an absolute URL"), v.regex(/^https?:\/\//, "must be http or https"))),
  MINT_SERVICE_TOKEN: v.optional(v.string()),
  TIER_NFT_PLUS: v.optional(CollectionId),
  TIER_NFT_PRO: v.optional(CollectionId),
  SERVER_IDENTITY_KEY: v.optional(v.pipe(v.string(), v.check(isPrivateKeyText, "must be a secp256k1 private key: 64 hex digits or WIF"))),
  CERTIFICATE_ISSUANCE_ENABLED: Bool,
  CERTIFICATE_REVOCATION_DEPTH: v.pipe(v.optional(v.string(), "6"), v.transform(Number), v.integer("must be a whole number of blocks"), v.minValue(1), v.maxValue(100)),
  CERTIFICATE_FUNDING_KEY: v.optional(v.pipe(v.string(), v.check(isPrivateKeyText, "must be a secp256k1 private key: 64 hex digits or WIF"))),
  ARC_URL: v.optional(v.pipe(v.string(), v.url("must be an absolute URL"), v.regex(/^https?:\/\//, "must be an http(s) URL")), "https://arc.gorillapool.io"),
  ARC_API_KEY: v.optional(v.pipe(v.string(), v.regex(/^\S+$/, "must have no spaces"))),
  ...LIMIT_SETTINGS,
  METRICS_TOKEN: v.optional(v.pipe(v.string(), v.regex(/^\S{32,}$/, "must be at least 32 characters without spaces"))),
});

export type DatabaseTarget =
  | { kind: "sqlite"; file: string }
  | { kind: "postgres"; url: string };

function parseDatabase(url: string, dataDir: string): DatabaseTarget {
  if (/^postgres(ql)?:\/\//.test(url)) return { kind: "postgres", url };
  if (url.startsWith("file:")) url = url.slice("file:".length).replace(/^\/\/(?=\/)/, "");
  if (url === ":memory:") return { kind: "sqlite", file: url };
  if (!url) url = resolve(dataDir, "idp.sqlite");
  return { kind: "sqlite", file: resolve(url) };
}

/** STRIPE_API_BASE_URL as the Stripe SDK's host, port and protocol options. */
function stripeApi(base: string | undefined) {
  if (!base) return undefined;
  const url = new URL(base);
  const protocol = url.protocol === "http:" ? "http" : "https";
  return Object.freeze({ host: url.hostname, port: Number(url.port) || (protocol === "http" ? 80 : 443), protocol } as const);
}

/** SERVER_IDENTITY_KEY's accepted forms: 64 hex digits, or a WIF string. */
function isPrivateKeyText(text: string): boolean {
  try {
    privateKeyHex(text);
    return true;
  } catch {
    return false;
  }
}

/** A secp256k1 private key (hex or WIF) as 64 hex digits. */
function privateKeyHex(text: string): string {
  const key = /^[0-9a-fA-F]{64}$/.test(text) ? PrivateKey.fromHex(text) : PrivateKey.fromWif(text);
  return key.toHex().padStart(64, "0");
}

type Env = v.InferOutput<typeof EnvSchema>;

/** The checked environment as the service's settings: rules across keys, warnings, derived values. No I/O. */
function settingsOf(e: Env) {
  const warnings: string[] = [];
  const production = e.NODE_ENV === "production";
  const authUrl = (e.AUTH_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, "");
  const url = new URL(authUrl);
  // A path is allowed (an issuer such as https://id.example.com/idp): the service is then served
  // under it, and answers the path-inserted discovery URLs at the root of the host (lib/path-prefix.ts).
  if (url.search || url.hash || url.username || url.password) throw new ConfigError("AUTH_URL: must be an http(s) URL without query, fragment or credentials");
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new ConfigError("AUTH_URL: must be an http(s) URL");

  if (production) {
    if (!e.BETTER_AUTH_SECRET) throw new ConfigError("BETTER_AUTH_SECRET: required when NODE_ENV=production");
    if (url.protocol !== "https:") throw new ConfigError("AUTH_URL: must be https when NODE_ENV=production");
  }
  // Reset, verification and e-mail change links are credentials: in production they go by mail
  // or nowhere, never to the log (OWASP ASVS V7.1.1: no credentials in logs).
  if (production && !e.SMTP_URL && !e.MAIL_DISABLED) {
    throw new ConfigError("SMTP_URL: required when NODE_ENV=production (or set MAIL_DISABLED=true to run without e-mail)");
  }
  if (e.MAIL_DISABLED) {
    if (e.REQUIRE_EMAIL_VERIFICATION) throw new ConfigError("REQUIRE_EMAIL_VERIFICATION: cannot be true with MAIL_DISABLED=true (no one could verify an address)");
    warnings.push(
      "MAIL_DISABLED=true: no e-mail is sent. Password reset, e-mail change and invitation mails are dropped, and their links are never logged.",
    );
  } else if (!e.SMTP_URL) {
    warnings.push("SMTP_URL is not set: e-mails are not sent; with LOG_LEVEL=debug their links are written to the log (development only).");
  }
  // The passkey RP ID is AUTH_URL's host name, and browsers refuse WebAuthn for an IP-address RP ID
  // (Chromium: "This is an invalid domain"), so passkeys need a domain name.
  if (/^\[|^\d+\.\d+\.\d+\.\d+$/.test(url.hostname)) {
    warnings.push(`AUTH_URL's host ${url.hostname} is an IP address: browsers refuse passkeys there. Use a domain name (http://localhost while developing).`);
  }
  if (e.OUTBOUND_ALLOW_PRIVATE) {
    warnings.push("OUTBOUND_ALLOW_PRIVATE=true: JWKS, back-channel logout and ordinals indexer fetches may reach loopback and private addresses (SSRF). Development and tests only.");
  }
  if (e.WALLET_CONNECT_ALLOW_PATH_ONLY) {
    warnings.push("WALLET_CONNECT_ALLOW_PATH_ONLY=true: a wallet-connection token that names no identity is accepted; whoever gets hold of an unused one can connect that wallet (and its NFTs and tier) to their own account.");
  }
  if (e.STRIPE_SECRET_KEY && !e.STRIPE_WEBHOOK_SECRET) {
    warnings.push("STRIPE_SECRET_KEY is set without STRIPE_WEBHOOK_SECRET: checkouts can be paid, but no payment is recorded and no tier NFT is minted.");
  }
  if (e.OUTBOUND_EXTRA_CA_FILE) {
    warnings.push(`OUTBOUND_EXTRA_CA_FILE is set: server-side fetches also trust the certificates in ${e.OUTBOUND_EXTRA_CA_FILE}.`);
  }
  if (e.DOMAIN_VERIFICATION_HTTPS_PORT !== 443) {
    warnings.push(`DOMAIN_VERIFICATION_HTTPS_PORT=${e.DOMAIN_VERIFICATION_HTTPS_PORT}: the https domain check looks on that port, not 443. Tests only.`);
  }
  const serverIdentityKey = e.SERVER_IDENTITY_KEY ? privateKeyHex(e.SERVER_IDENTITY_KEY) : undefined;
  // Certificates signed by a key that lives in a data directory would outlive it: no issuance without a configured key.
  if (production && e.CERTIFICATE_ISSUANCE_ENABLED && !serverIdentityKey) {
    throw new ConfigError("SERVER_IDENTITY_KEY: required when NODE_ENV=production and CERTIFICATE_ISSUANCE_ENABLED=true (certificates name it as their certifier)");
  }
  // Each certificate names a funded revocation outpoint: without the key that funds them nothing can be issued.
  const fundingKey = e.CERTIFICATE_FUNDING_KEY ? privateKeyHex(e.CERTIFICATE_FUNDING_KEY) : undefined;
  if (production && e.CERTIFICATE_ISSUANCE_ENABLED && !fundingKey) {
    throw new ConfigError("CERTIFICATE_FUNDING_KEY: required when NODE_ENV=production and CERTIFICATE_ISSUANCE_ENABLED=true (it funds each certificate's revocation outpoint)");
  }
  if (e.CERTIFICATE_ISSUANCE_ENABLED && !fundingKey) {
    warnings.push("CERTIFICATE_ISSUANCE_ENABLED=true without CERTIFICATE_FUNDING_KEY: no revocation outpoint can be funded, so signCertificate still answers 503.");
  }
  const database = parseDatabase(e.DATABASE_URL, e.DATA_DIR);
  // TRUST_PROXY=true (the older switch) means one proxy; TRUST_PROXY_HOPS, when set, decides.
  const proxyHops = e.TRUST_PROXY_HOPS ?? (e.TRUST_PROXY ? 1 : 0);
  return Object.freeze({
    env: e.NODE_ENV,
    port: e.PORT,
    host: e.HOST,
    /** Public base URL (an origin, or an origin and a path); also the OAuth/OIDC issuer, exactly as written (no trailing slash). */
    authUrl,
    database,
    /** BETTER_AUTH_SECRET; unset outside production, `provision` keeps a generated one in DATA_DIR. */
    secret: e.BETTER_AUTH_SECRET,
    redisUrl: e.REDIS_URL,
    logLevel: e.LOG_LEVEL,
    /** Apply pending schema changes at start-up (always on for SQLite). */
    autoMigrate: database.kind === "sqlite" || e.AUTO_MIGRATE === "true",
    smtpUrl: e.SMTP_URL,
    mailFrom: e.MAIL_FROM,
    /** MAIL_DISABLED=true: no mail is sent and no link is logged (lib/mailer.ts). */
    mailDisabled: e.MAIL_DISABLED,
    /** Where the account page's Contact support form sends (Plus and Pro); null: no form, the page says so. */
    supportEmail: e.SUPPORT_EMAIL ?? null,
    /** What frames the pages (routes/pages/layout.tsx): our name (SERVICE_DISPLAY_NAME) and the legal links every page keeps, white-label included. */
    pageChrome: Object.freeze({ serviceName: e.SERVICE_DISPLAY_NAME, legal: Object.freeze({ privacyUrl: e.PRIVACY_POLICY_URL ?? null, termsUrl: e.TERMS_OF_SERVICE_URL ?? null }) }),
    /** BRANDING_LOGO_MAX_BYTES: the largest logo a client's brand may fetch (plugins/branding/logo.ts). */
    brandingLogoMaxBytes: e.BRANDING_LOGO_MAX_BYTES,
    requireEmailVerification: e.REQUIRE_EMAIL_VERIFICATION,
    /** Behind at least one proxy of ours (proxyHops > 0): X-Forwarded-* headers are ours to read. */
    trustProxy: proxyHops > 0,
    /** Reverse proxies of ours in front of the service: the client address is this many X-Forwarded-For entries from the right (0: the socket's). */
    proxyHops,
    dataDir: e.DATA_DIR,
    ttl: Object.freeze({
      accessToken: e.ACCESS_TOKEN_TTL,
      refreshToken: e.REFRESH_TOKEN_TTL,
      code: e.AUTH_CODE_TTL,
      idToken: e.ID_TOKEN_TTL,
      /** Seconds after a rotation in which the rotated refresh token, presented again, gets the same new pair (0: reuse always revokes the family). */
      refreshReuseGrace: e.REFRESH_REUSE_GRACE_SECONDS,
    }),
    /** Anonymous registrations unused this many days are deleted (0: never). */
    anonymousClientTtlDays: e.ANONYMOUS_CLIENT_TTL_DAYS,
    /** Audit events older than this many days are deleted (0: never), by one instance at a time (plugins/audit/retention.ts). */
    auditLogRetentionDays: e.AUDIT_LOG_RETENTION_DAYS,
    /** How often each instance writes its per-client analytics counters to the database (plugins/analytics), in ms. */
    analyticsFlushMs: e.ANALYTICS_FLUSH_MS,
    /** Rate limits (lib/limits.ts): RATE_LIMIT_ENABLED and each limit's budget. */
    limits: Object.freeze({ enabled: e.RATE_LIMIT_ENABLED !== "false", points: limitPoints(e) }),
    sigmaServiceName: e.SIGMA_SERVICE_NAME,
    /** Bitcoin-Auth: accept only tokens whose request path is AUTH_URL + path (lib/bitcoin-auth.ts). */
    bitcoinAuthRequireHostBinding: e.BITCOIN_AUTH_REQUIRE_HOST_BINDING,
    /**
     * POST /api/wallet/connect also accepts a Bitcoin-Auth token over the path alone (as the
     * published Sigma client documents it), which names no identity: whoever holds an unused one
     * can connect that wallet to their own. Off: the token must also sign `{"bapId":"..."}`.
     */
    walletConnectAllowPathOnly: e.WALLET_CONNECT_ALLOW_PATH_ONLY,
    /**
     * Key sign-in (POST /sign-in/<SIGMA_SERVICE_NAME>) counts as a strong factor on its own and
     * skips the second-factor step of an account with two-factor on. Off: it stops at that step.
     */
    keySignInSkipsTwoFactor: e.KEY_SIGN_IN_SKIPS_TWO_FACTOR,
    /** Largest encrypted backup stored (POST /api/backup, /api/backup/sync), in bytes. */
    backupMaxBytes: e.BACKUP_MAX_BYTES,
    /** RFC 8628 device grant: code lifetime and minimum polling interval (s). */
    device: Object.freeze({ codeTtl: e.DEVICE_CODE_TTL, pollInterval: e.DEVICE_POLL_INTERVAL }),
    /** OpenID CIBA: a request's lifetime (and the most requested_expiry gets), the polling interval (s), and how many requests one person may have waiting. */
    ciba: Object.freeze({ requestTtl: e.CIBA_REQUEST_TTL, pollInterval: e.CIBA_POLL_INTERVAL, maxPending: e.CIBA_MAX_PENDING }),
    /** RFC 8693 token exchange: how many actors a delegated token may name (`act`, `act.act`, ...). */
    tokenExchangeMaxDepth: e.TOKEN_EXCHANGE_MAX_DEPTH,
    /**
     * Identity Assertion JWT Authorization Grants (ID-JAG): the issuers of the resource
     * authorization servers we issue assertions for (token exchange), and the issuers whose
     * assertions we redeem (the JWT bearer grant).
     */
    idJag: Object.freeze({ audiences: Object.freeze(issuerList(e.ID_JAG_AUDIENCES ?? "")), trustedIssuers: Object.freeze(issuerList(e.ID_JAG_TRUSTED_ISSUERS ?? "")) }),
    /**
     * RFC 9126 pushed authorization requests: how long a `request_uri` is good for (s, single
     * use), and whether every authorization request must be pushed first.
     */
    par: Object.freeze({ requestUriTtl: e.PAR_REQUEST_URI_TTL, required: e.REQUIRE_PUSHED_AUTHORIZATION_REQUESTS }),
    /** RFC 9449 §8: how long a DPoP server nonce is good for at least (s); 0: no server nonces. */
    dpopNonceLifetime: e.DPOP_NONCE_LIFETIME,
    /** Agent auth: let unknown hosts register themselves (needed for autonomous agents). */
    agents: Object.freeze({ dynamicHosts: e.AGENT_DYNAMIC_HOSTS }),
    /** Server-side fetches of URLs others chose (lib/safe-fetch.ts) may reach loopback and private addresses. Development only. */
    outboundAllowPrivate: e.OUTBOUND_ALLOW_PRIVATE,
    /** OUTBOUND_EXTRA_CA_FILE: its PEM certificates are read by `provision`. */
    outboundExtraCaFile: e.OUTBOUND_EXTRA_CA_FILE,
    /**
     * Domain verification (plugins/domain-verification): the DNS servers asked for TXT records
     * (empty: the system's), how long a challenge may be met and a verification holds (s), the
     * port the https method fetches from (443 but in tests), and how many verifications one
     * person may hold pending (its checks a minute are the `domainVerify` limit).
     */
    domainVerification: Object.freeze({
      resolverServers: Object.freeze((e.DNS_RESOLVER_SERVERS ?? "").split(",").map((s) => s.trim()).filter(Boolean)),
      challengeTtl: e.DOMAIN_VERIFICATION_CHALLENGE_TTL,
      validity: e.DOMAIN_VERIFICATION_VALIDITY,
      httpsPort: e.DOMAIN_VERIFICATION_HTTPS_PORT,
      maxPending: e.DOMAIN_VERIFICATION_MAX_PENDING,
    }),
    /** Client ID metadata documents: deadline of one fetch (ms). */
    clientMetadataTimeoutMs: e.CLIENT_METADATA_TIMEOUT,
    /** The 1Sat ordinals indexer (NFT ownership, plugins/wallet/ordinals.ts): base URL and deadline per attempt (ms). */
    ordinals: Object.freeze({ apiUrl: e.ORDINALS_API_URL.replace(/\/+$/, ""), timeoutMs: e.ORDINALS_API_TIMEOUT }),
    /** E-mail change: a session younger than `reauthWindow` seconds stands for re-authentication. */
    emailChange: Object.freeze({ reauthWindow: e.EMAIL_CHANGE_REAUTH_WINDOW }),
    /** Keep OAuth access and refresh tokens when a password is reset (default: they are revoked). */
    keepOAuthGrantsOnPasswordReset: e.KEEP_OAUTH_GRANTS_ON_PASSWORD_RESET,
    /**
     * Paid tiers through Stripe Checkout (plugins/subscriptions): the API key, the webhook signing
     * secret, the one-time price of each tier and interval, and where the SDK sends its calls
     * (api.stripe.com unless STRIPE_API_BASE_URL names a stand-in).
     */
    stripe: Object.freeze({
      secretKey: e.STRIPE_SECRET_KEY,
      webhookSecret: e.STRIPE_WEBHOOK_SECRET,
      prices: Object.freeze({
        plus: Object.freeze({ monthly: e.STRIPE_PRICE_PLUS, annual: e.STRIPE_PRICE_PLUS_ANNUAL }),
        pro: Object.freeze({ monthly: e.STRIPE_PRICE_PRO, annual: e.STRIPE_PRICE_PRO_ANNUAL }),
      }),
      api: stripeApi(e.STRIPE_API_BASE_URL),
    }),
    /** The service that mints tier NFTs (POST, JSON); unset: mint jobs wait. */
    minting: Object.freeze({ serviceUrl: e.MINT_SERVICE_URL, token: e.MINT_SERVICE_TOKEN }),
    /** Each paid tier's NFT, as the 1Sat collection id (`txid_vout`) its items carry; unset: nobody holds that tier. */
    tierNfts: Object.freeze({ plus: e.TIER_NFT_PLUS, pro: e.TIER_NFT_PRO }),
    /** The bearer token a Prometheus scraper sends for GET /metrics; unset: /metrics answers 404. */
    metricsToken: e.METRICS_TOKEN,
    /**
     * BRC-103/104 mutual authentication (lib/mutual-auth.ts): the server's identity private key
     * (hex), from SERVER_IDENTITY_KEY; unset, `provision` keeps a generated one in DATA_DIR. Never log it.
     */
    serverIdentityKey,
    /**
     * BRC-52 certificates (routes/certificates/certificates.ts): issuance on POST /api/certificates/signCertificate
     * (off by default), the confirmation depth after which a revocation is final, and the revocation chain.
     */
    certificates: Object.freeze({
      issuanceEnabled: e.CERTIFICATE_ISSUANCE_ENABLED,
      revocationDepth: e.CERTIFICATE_REVOCATION_DEPTH,
      /**
       * The revocation chain (plugins/certificates/arc-chain.ts): the key whose coins fund each
       * certificate's revocation outpoint (hex, from CERTIFICATE_FUNDING_KEY; unset: no chain).
       * Never log it. Its coins are found through the ordinals indexer (ORDINALS_API_URL).
       */
      fundingKey,
      /** ARC, the broadcaster: ARC_URL and ARC_API_KEY (sent as a bearer token). */
      arc: Object.freeze({ url: e.ARC_URL.replace(/\/+$/, ""), apiKey: e.ARC_API_KEY }),
    }),
    /** Messages for the operator, printed loudly at start-up. */
    warnings: Object.freeze(warnings),
  });
}

/** The environment, checked key by key (EnvSchema), then as a whole (settingsOf). */
const SettingsSchema = v.pipe(EnvSchema, v.transform(settingsOf));

/**
 * What the environment says, before anything is read from or written to a file: the settings
 * as `v.InferOutput` of the schema, with social sign-in (lib/social-env.ts) beside them.
 */
export type Settings = v.InferOutput<typeof SettingsSchema> & {
  /** Social sign-in: built-in providers with both credentials set, and generic OIDC providers. */
  readonly social: SocialSettings;
};

/** Reads and checks every setting; throws ConfigError naming each bad key. Pure: no file is read or written. */
export function parseSettings(source: Record<string, string | undefined>): Settings {
  const raw = Object.fromEntries(Object.entries(source).filter(([, value]) => value !== undefined && value !== ""));
  const parsed = v.safeParse(SettingsSchema, raw);
  const social = parseSocialSettings(raw);
  if (!parsed.success || social.issues.length) {
    const lines = (parsed.issues ?? []).map((issue) => `  ${v.getDotPath(issue) ?? "?"}: ${issue.message}`);
    throw new ConfigError(`Invalid settings:\n${[...lines, ...social.issues].join("\n")}`);
  }
  return Object.freeze({ ...parsed.output, social: social.social, warnings: Object.freeze([...social.warnings, ...parsed.output.warnings]) });
}

/** The settings the service runs with: `Settings`, with the secret, the identity key and the extra CAs in hand. */
export type Config = Readonly<
  Omit<Settings, "secret" | "serverIdentityKey" | "outboundExtraCaFile"> & {
    /** BETTER_AUTH_SECRET, or the development secret kept in DATA_DIR. */
    secret: string;
    /** SERVER_IDENTITY_KEY (hex), or the key generated once into DATA_DIR. Never log it. */
    serverIdentityKey: string;
    /** OUTBOUND_EXTRA_CA_FILE's certificates (PEM): trusted by the guarded fetcher besides the system's. Tests and private deployments. */
    outboundExtraCa: string | undefined;
  }
>;

/** The file side (lib/provision.ts): what no setting gives is generated once into DATA_DIR and kept there; extra CAs are read. */
export function provision(settings: Settings): Config {
  const { secret, serverIdentityKey, outboundExtraCaFile, ...rest } = settings;
  const { dataDir } = settings;
  const warnings = [...settings.warnings];
  const ownSecret = secret ?? keptFile(dataDir, "dev-secret", () => randomBytes(32).toString("base64url"));
  if (!secret) warnings.push(`BETTER_AUTH_SECRET is not set: using a development secret kept in ${resolve(dataDir, "dev-secret")}. Never run like this in production.`);
  const identityKey = serverIdentityKey ?? privateKeyHex(keptFile(dataDir, "server-identity-key", () => PrivateKey.fromRandom().toHex().padStart(64, "0")));
  if (!serverIdentityKey) {
    warnings.push(
      `SERVER_IDENTITY_KEY is not set: the mutual-authentication identity is a key kept in ${resolve(dataDir, "server-identity-key")}. ` +
        "Set it in production, or the service's identity changes with the data directory" +
        (settings.redisUrl ? "; with several instances (REDIS_URL) set the same key on each, or a peer that shook hands with one is refused by the others." : "."),
    );
  }
  return Object.freeze({
    ...rest,
    secret: ownSecret,
    serverIdentityKey: identityKey,
    outboundExtraCa: outboundExtraCaFile ? readCaFile(outboundExtraCaFile) : undefined,
    warnings: Object.freeze(warnings),
  });
}

/** The settings from the environment, provisioned: what the composition roots start from. */
export function loadEnv(source: Record<string, string | undefined> = process.env): Config {
  return provision(parseSettings(source));
}
