import { oauthDeviceAuthorization } from "@better-auth/oauth-provider";
import type { BetterAuthPlugin } from "better-auth";
import { createAuthMiddleware } from "better-auth/api";
import { formatUserCode, USER_CODE_LENGTH } from "./user-code.js";

export interface DeviceGrantOptions {
  /** Where people enter the code: our /device page (verification_uri). */
  verificationUri: string;
  /** Lifetime of a device code and its user code, in seconds. @default 600 */
  codeTtl?: number;
  /** Minimum polling interval at the token endpoint, in seconds (RFC 8628 §3.5 slow_down). @default 5 */
  pollInterval?: number;
  /** User-code checks allowed per IP per minute on /device, /device/approve and /device/deny. @default 10 */
  userCodeRateLimit?: number;
}

/** The routes that take a user code: each one is a guess an attacker could make. */
const USER_CODE_PATHS = new Set(["/device", "/device/approve", "/device/deny"]);

/**
 * The RFC 8628 device authorization grant: @better-auth/oauth-provider's
 * `oauthDeviceAuthorization` (device code issue at /device/code, the device_code grant at
 * /oauth2/token with authorization_pending, slow_down, access_denied and expired_token, and
 * the verify/approve/deny steps), with our policy on top:
 * - user codes guessing is rate limited per IP on every route that takes one (the plugin's
 *   own rule covers GET /device only, with a window as long as the code's lifetime);
 * - the device authorization response shows the user code grouped, `WDJB-MJHT` (§6.1).
 * Clients must be registered with the grant type; DCR accepts it because the plugin adds it
 * to oauth-provider's supported grant types.
 */
export function deviceGrant(options: DeviceGrantOptions) {
  const { codeTtl = 600, pollInterval = 5, userCodeRateLimit = 10 } = options;
  const plugin = oauthDeviceAuthorization({
    verificationUri: options.verificationUri,
    expiresIn: `${codeTtl}s`,
    interval: `${pollInterval}s`,
    userCodeLength: USER_CODE_LENGTH,
  });
  return {
    ...plugin,
    rateLimit: [{ pathMatcher: (path: string) => USER_CODE_PATHS.has(path), window: 60, max: userCodeRateLimit }],
    hooks: {
      after: [
        {
          matcher: (ctx) => ctx.path === "/device/code",
          handler: createAuthMiddleware(async (ctx) => {
            const returned = ctx.context.returned as Record<string, unknown> | undefined;
            if (!returned || returned instanceof Response || typeof returned.user_code !== "string") return;
            return ctx.json({ ...returned, user_code: formatUserCode(returned.user_code) });
          }),
        },
      ],
    },
  } satisfies BetterAuthPlugin;
}
