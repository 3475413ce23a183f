/**
 * Every rate limit of the service, in one table: what it counts, what it is keyed by, its
 * default budget and window, and the setting that overrides the budget. lib/env.ts reads the
 * settings from here, lib/rate-limit.ts builds one counter per row, lib/auth-endpoints.ts maps
 * better-auth's routes onto the rows (lib/auth-limits.ts applies them), and app.ts hands the
 * rest to our own routes. The limits
 * table in docs/limits.md lists the same rows (tests/meta/limits-table.test.ts checks it).
 *
 * Keys:
 * - `ip`: the client address (lib/client-address.ts). Only for surfaces a person uses without
 *   credentials, where the address is all there is: password checks, sign-up, mail, DCR, codes.
 * - `client`: the OAuth client (client_id of the Basic credentials or the form), `token`: the
 *   bearer token presented, `agent`: the agent or host of an agent JWT, `key`: the public key of
 *   a Bitcoin-Auth token, `session`: the session token, `user`: the signed-in user.
 *   A client, key or agent is charged only for answers that prove it was verified; the rest
 *   count per IP (`authFailures`), so a caller naming someone else's never spends its budget
 *   (lib/auth-limits.ts).
 */
export type LimitKey = "ip" | "client" | "token" | "agent" | "key" | "session" | "user";

export interface LimitRule {
  /** What the counter is keyed by (see above). */
  readonly key: LimitKey;
  /** Requests allowed per key per window (the setting, when there is one, overrides it). */
  readonly points: number;
  /** The window, in seconds (fixed windows). */
  readonly windowSeconds: number;
  /** The environment setting that overrides `points`, or null. */
  readonly setting: string | null;
  /** Where it applies, for people (the table in docs/limits.md says the same). */
  readonly where: string;
}

export const LIMITS = {
  // --- people, unauthenticated: per client address ---------------------------------------
  passwordCheck: {
    key: "ip", points: 20, windowSeconds: 60, setting: "SIGN_IN_RATE_LIMIT",
    where: "password sign-in (/sign-in/email, /sign-in/username), /change-email, /change-password, /two-factor/verify-*: one count",
  },
  signUp: { key: "ip", points: 20, windowSeconds: 60, setting: "SIGN_UP_RATE_LIMIT", where: "/sign-up/email and other sign-ups (not key sign-up)" },
  accountMail: {
    key: "ip", points: 5, windowSeconds: 60, setting: "ACCOUNT_MAIL_RATE_LIMIT",
    where: "/request-password-reset, /forget-password*, /reset-password*, /send-verification-email: one count",
  },
  register: { key: "ip", points: 20, windowSeconds: 60, setting: "REGISTER_RATE_LIMIT", where: "POST /oauth2/register (RFC 7591 dynamic registration)" },
  deviceUserCode: { key: "ip", points: 10, windowSeconds: 60, setting: "DEVICE_CODE_RATE_LIMIT", where: "user-code checks: /device, /device/approve, /device/deny and the /device page, one count (RFC 8628 §5.1)" },
  approval: { key: "ip", points: 10, windowSeconds: 60, setting: "APPROVAL_RATE_LIMIT", where: "agent approval: /agent-approval (code lookup), /agent/approve-capability and the /agents/approve page" },
  anonymous: { key: "ip", points: 600, windowSeconds: 60, setting: "ANONYMOUS_RATE_LIMIT", where: "any other /api/auth route called without a credential (authorize, social sign-in, callbacks...)" },
  // --- machines and signed-in sessions: per credential -------------------------------------
  client: {
    key: "client", points: 5000, windowSeconds: 1, setting: "CLIENT_RATE_LIMIT",
    where: "/oauth2/token, /oauth2/introspect, /oauth2/revoke, /device/code, /oauth2/bc-authorize, per authenticated client",
  },
  token: { key: "token", points: 5000, windowSeconds: 1, setting: "TOKEN_RATE_LIMIT", where: "/oauth2/userinfo and /oauth2/register/<id> (RFC 7592), per bearer token" },
  agent: { key: "agent", points: 1000, windowSeconds: 1, setting: "AGENT_RATE_LIMIT", where: "/agent/* and /capability/* (execute, status, ...), per agent or host" },
  session: { key: "session", points: 5000, windowSeconds: 1, setting: "SESSION_RATE_LIMIT", where: "any other /api/auth route called with a session (cookie or bearer), per session" },
  sessionAddress: {
    key: "ip", points: 6000, windowSeconds: 60, setting: "SESSION_IP_RATE_LIMIT",
    where: "the same routes called with a bearer session, per client address: a ceiling, since a bearer token is counted before it is checked (a signed cookie is checked first and needs none)",
  },
  keySignIn: { key: "key", points: 10, windowSeconds: 60, setting: "KEY_SIGN_IN_RATE_LIMIT", where: "key sign-in and key sign-up (/sign-in/<SIGMA_SERVICE_NAME>, /sign-up/<...>), per public key" },
  keySignInAddress: { key: "ip", points: 1000, windowSeconds: 60, setting: "KEY_SIGN_IN_IP_RATE_LIMIT", where: "the same routes, per client address: a ceiling for a whole fleet behind one NAT" },
  authFailures: {
    key: "ip", points: 100, windowSeconds: 60, setting: "AUTH_FAILURE_RATE_LIMIT",
    where: "failed authentications on the per-credential routes above (401, invalid_grant, and any 4xx that did not verify the client, key or agent it names), per client address; past it those routes answer 429 to that address",
  },
  // --- our own routes (spec, Limits) -----------------------------------------------------------
  backupSync: { key: "ip", points: 20, windowSeconds: 60, setting: null, where: "POST /api/backup/sync (spec: 20 a minute per IP)" },
  backupSignedRead: { key: "ip", points: 20, windowSeconds: 60, setting: null, where: "Bitcoin-Auth signed reads of /api/backup" },
  profileWrite: { key: "user", points: 60, windowSeconds: 60, setting: null, where: "writes to /api/user/* and /api/bap/*" },
  domainVerify: {
    key: "user", points: 20, windowSeconds: 60, setting: "DOMAIN_VERIFICATION_RATE_LIMIT",
    where: "domain verification checks (/api/domain-verifications/:id/verify), each a DNS query or an outbound fetch",
  },
  supportMessage: { key: "user", points: 3, windowSeconds: 60, setting: null, where: "the account page's Contact support form (`POST /account/support`), per person" },
  mutualAuthHandshake: { key: "ip", points: 30, windowSeconds: 60, setting: null, where: "BRC-103 handshakes at /.well-known/auth (each holds a session in memory)" },
} as const satisfies Record<string, LimitRule>;

export type LimitName = keyof typeof LIMITS;
export type LimitSetting = Exclude<(typeof LIMITS)[LimitName]["setting"], null>;

export const LIMIT_NAMES = Object.keys(LIMITS) as LimitName[];

/** What the deployment chose: on or off (RATE_LIMIT_ENABLED), and the budget of each limit. */
export interface LimitSettings {
  readonly enabled: boolean;
  readonly points: Readonly<Record<LimitName, number>>;
}

/** The budget of each limit: its setting's value when given, else the table's default. */
export function limitPoints(settings: Partial<Record<LimitSetting, number>>): Readonly<Record<LimitName, number>> {
  const points = {} as Record<LimitName, number>;
  for (const name of LIMIT_NAMES) {
    const rule: LimitRule = LIMITS[name];
    points[name] = (rule.setting && settings[rule.setting as LimitSetting]) || rule.points;
  }
  return Object.freeze(points);
}
