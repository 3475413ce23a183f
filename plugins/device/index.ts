import { oauthDeviceAuthorization } from "@better-auth/oauth-provider";
import type { BetterAuthPlugin } from "better-auth";
import { createAuthMiddleware } from "better-auth/api";
import { deviceDecision } from "./decision.js";
import { formatUserCode, USER_CODE_LENGTH } from "./user-code.js";
import { AUTH_PATHS } from "../../lib/auth-endpoints.js";

export interface DeviceGrantOptions {
  /** Where people enter the code: our /device page (verification_uri). */
  verificationUri: string;
  /** Lifetime of a device code and its user code, in seconds. @default 600 */
  codeTtl?: number;
  /** Minimum polling interval at the token endpoint, in seconds (RFC 8628 §3.5 slow_down). @default 5 */
  pollInterval?: number;
}

/**
 * The RFC 8628 device authorization grant: @better-auth/oauth-provider's
 * `oauthDeviceAuthorization` (device code issue at /device/code, the device_code grant at
 * /oauth2/token with authorization_pending, slow_down, access_denied and expired_token, and
 * the verify/approve/deny steps), with our policy on top:
 * - user-code guessing is rate limited per IP with one count shared by every route that takes
 *   a code (RFC 8628 §5.1: the verification step must be rate limited against brute force):
 *   `deviceUserCode` in lib/limits.ts, applied around the handler (lib/auth-limits.ts);
 * - the device authorization response shows the user code grouped, `WDJB-MJHT` (§6.1);
 * - approve and deny decide a code with one conditional write, so of two answers sent at once
 *   exactly one wins on PostgreSQL too (./decision.ts).
 * Clients must be registered with the grant type; DCR accepts it because the plugin adds it
 * to oauth-provider's supported grant types.
 */
export function deviceGrant(options: DeviceGrantOptions) {
  const { codeTtl = 600, pollInterval = 5 } = options;
  const plugin = oauthDeviceAuthorization({
    verificationUri: options.verificationUri,
    expiresIn: `${codeTtl}s`,
    interval: `${pollInterval}s`,
    userCodeLength: USER_CODE_LENGTH,
  });
  return {
    ...plugin,
    endpoints: {
      ...plugin.endpoints,
      deviceApprove: deviceDecision(plugin.endpoints.deviceApprove, "approved"),
      deviceDeny: deviceDecision(plugin.endpoints.deviceDeny, "denied"),
    },
    // lib/limits.ts `deviceUserCode` replaces the plugin's per-path rule.
    rateLimit: [],
    hooks: {
      after: [
        {
          matcher: (ctx) => ctx.path === AUTH_PATHS.deviceCode,
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
