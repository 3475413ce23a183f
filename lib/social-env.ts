import * as v from "valibot";

/**
 * Social sign-in settings, parsed from the same raw environment `loadEnv` reads (this module
 * never touches `process.env`). Two families:
 *
 * - the built-in providers, `<PROVIDER>_CLIENT_ID` + `<PROVIDER>_CLIENT_SECRET`; a provider is
 *   on only when both are set (one without the other is a start-up warning);
 * - any OpenID Connect provider by issuer, as numbered groups `OIDC_<N>_ID`, `_ISSUER`,
 *   `_CLIENT_ID`, `_CLIENT_SECRET` (required) and `_NAME`, `_SCOPES`, `_TOKEN_AUTH_METHOD` (optional).
 */

/** better-auth's provider ids, in the order the sign-in page lists them, with the names people know. */
export const BUILT_IN_PROVIDERS = {
  google: { env: "GOOGLE", name: "Google" },
  github: { env: "GITHUB", name: "GitHub" },
  twitter: { env: "TWITTER", name: "X" },
  discord: { env: "DISCORD", name: "Discord" },
  apple: { env: "APPLE", name: "Apple" },
} as const;
export type BuiltInProviderId = keyof typeof BUILT_IN_PROVIDERS;

export interface ClientCredentials {
  readonly clientId: string;
  readonly clientSecret: string;
}

export interface OidcProviderSettings extends ClientCredentials {
  /** Provider id: the path segment of /api/auth/callback/<id> and the Account's providerId. */
  readonly id: string;
  /** Shown on the sign-in button: "Continue with <name>". */
  readonly name: string;
  /** Issuer URL exactly as configured, without a trailing slash. */
  readonly issuer: string;
  readonly scopes: readonly string[];
  /** How we authenticate at its token endpoint. RFC 6749 §2.3.1: every server supports basic. */
  readonly tokenAuthMethod: "client_secret_basic" | "client_secret_post";
}

export interface SocialSettings {
  readonly builtIn: Readonly<Partial<Record<BuiltInProviderId, ClientCredentials>>>;
  /** Apple's native-app audience (its ID tokens name the bundle id, not the Services ID). */
  readonly appleAppBundleIdentifier: string | undefined;
  readonly oidc: readonly OidcProviderSettings[];
}

const OIDC_KEY = /^OIDC_(\d+)_([A-Z_]+)$/;
const OIDC_FIELDS = ["ID", "NAME", "ISSUER", "CLIENT_ID", "CLIENT_SECRET", "SCOPES", "TOKEN_AUTH_METHOD"] as const;
/** Ids a generic provider may not take: the built-ins (it would shadow them) and password accounts. */
const RESERVED_IDS = new Set<string>([...Object.keys(BUILT_IN_PROVIDERS), "credential"]);
/** RFC 6890: all of 127.0.0.0/8 is loopback, as are ::1 and (RFC 6761 §6.3) localhost. */
const isLoopback = (host: string) => host === "localhost" || host === "[::1]" || /^127(\.\d{1,3}){3}$/.test(host);

const ProviderId = v.pipe(
  v.string(),
  v.regex(/^[a-z0-9][a-z0-9-]{0,31}$/, "must be 1-32 lowercase letters, digits or dashes"),
  v.check((id) => !RESERVED_IDS.has(id), "is reserved (a built-in provider or `credential`)"),
);
const Issuer = v.pipe(
  v.string(),
  v.url("must be an absolute URL"),
  v.check((s) => {
    const u = new URL(s);
    return !u.search && !u.hash && (u.protocol === "https:" || (u.protocol === "http:" && isLoopback(u.hostname)));
  }, "must be an https URL without query or fragment (http only on loopback)"),
  v.transform((s) => s.replace(/\/+$/, "")),
);
const Required = v.pipe(v.string(), v.minLength(1, "is required"));
const OidcGroup = v.object({
  ID: ProviderId,
  NAME: v.optional(v.pipe(v.string(), v.maxLength(64, "must be at most 64 characters"))),
  ISSUER: Issuer,
  CLIENT_ID: Required,
  CLIENT_SECRET: Required,
  TOKEN_AUTH_METHOD: v.optional(v.picklist(["client_secret_basic", "client_secret_post"], "must be client_secret_basic or client_secret_post"), "client_secret_basic"),
  SCOPES: v.optional(v.pipe(v.string(), v.regex(/^[\x21\x23-\x5B\x5D-\x7E ]+$/, "must be space-separated scope tokens (RFC 6749 §3.3)"))),
});

export function parseSocialSettings(raw: Readonly<Record<string, string | undefined>>): { social: SocialSettings; issues: string[]; warnings: string[] } {
  const issues: string[] = [];
  const warnings: string[] = [];

  const builtIn: Partial<Record<BuiltInProviderId, ClientCredentials>> = {};
  for (const [id, { env, name }] of Object.entries(BUILT_IN_PROVIDERS) as [BuiltInProviderId, (typeof BUILT_IN_PROVIDERS)[BuiltInProviderId]][]) {
    const clientId = raw[`${env}_CLIENT_ID`];
    const clientSecret = raw[`${env}_CLIENT_SECRET`];
    if (clientId && clientSecret) builtIn[id] = { clientId, clientSecret };
    else if (clientId || clientSecret) {
      const missing = clientId ? `${env}_CLIENT_SECRET` : `${env}_CLIENT_ID`;
      warnings.push(`${missing} is not set: ${name} sign-in stays off until both ${env}_CLIENT_ID and ${env}_CLIENT_SECRET are set.`);
    }
  }

  // Group OIDC_<N>_* keys by N; an unknown suffix is a typo worth stopping for.
  const groups = new Map<string, Record<string, string>>();
  for (const [key, value] of Object.entries(raw)) {
    const match = OIDC_KEY.exec(key);
    if (!match || value === undefined) continue;
    const [, n, field] = match as unknown as [string, string, string];
    if (!(OIDC_FIELDS as readonly string[]).includes(field)) {
      issues.push(`  ${key}: unknown setting (expected OIDC_${n}_${OIDC_FIELDS.join(`, OIDC_${n}_`)})`);
      continue;
    }
    groups.set(n, { ...groups.get(n), [field]: value });
  }

  const oidc: OidcProviderSettings[] = [];
  const seen = new Set<string>();
  for (const [n, group] of [...groups].sort(([a], [b]) => Number(a) - Number(b))) {
    const parsed = v.safeParse(OidcGroup, group);
    if (!parsed.success) {
      for (const issue of parsed.issues) {
        const field = v.getDotPath(issue) ?? "?";
        const message = issue.input === undefined ? "is required when any OIDC_" + n + "_* setting is set" : issue.message;
        issues.push(`  OIDC_${n}_${field}: ${message}`);
      }
      continue;
    }
    const g = parsed.output;
    if (seen.has(g.ID)) {
      issues.push(`  OIDC_${n}_ID: "${g.ID}" is used by another OIDC_<N>_ID`);
      continue;
    }
    seen.add(g.ID);
    const scopes = (g.SCOPES ?? "openid email profile").split(" ").filter(Boolean);
    oidc.push(
      Object.freeze({
        id: g.ID,
        name: g.NAME || g.ID,
        issuer: g.ISSUER,
        clientId: g.CLIENT_ID,
        clientSecret: g.CLIENT_SECRET,
        scopes: Object.freeze(scopes.includes("openid") ? scopes : ["openid", ...scopes]),
        tokenAuthMethod: g.TOKEN_AUTH_METHOD,
      }),
    );
  }

  const social = Object.freeze({
    builtIn: Object.freeze(builtIn),
    appleAppBundleIdentifier: raw.APPLE_APP_BUNDLE_IDENTIFIER || undefined,
    oidc: Object.freeze(oidc),
  });
  return { social, issues, warnings };
}
