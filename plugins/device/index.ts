import { getIP } from "@better-auth/core/utils/ip";
import { normalizePathname } from "@better-auth/core/utils/url";
import { oauthDeviceAuthorization } from "@better-auth/oauth-provider";
import type { BetterAuthPlugin } from "better-auth";
import { createAuthMiddleware } from "better-auth/api";
import type { WindowLimiter } from "../../lib/rate-limit.js";
import { formatUserCode, USER_CODE_LENGTH } from "./user-code.js";

export interface DeviceGrantOptions {
  /** Where people enter the code: our /device page (verification_uri). */
  verificationUri: string;
  /** Lifetime of a device code and its user code, in seconds. @default 600 */
  codeTtl?: number;
  /** Minimum polling interval at the token endpoint, in seconds (RFC 8628 §3.5 slow_down). @default 5 */
  pollInterval?: number;
  /**
   * Counts user-code checks per client IP across /device, /device/approve and /device/deny
   * together (the /device page reaches them too); null turns the limit off. Built by the
   * caller (in Redis when configured), e.g. 10 per minute.
   */
  userCodeLimiter: WindowLimiter | null;
}

/** The routes that take a user code: each one is a guess an attacker could make. */
const USER_CODE_PATHS = new Set(["/device", "/device/approve", "/device/deny"]);

/**
 * The RFC 8628 device authorization grant: @better-auth/oauth-provider's
 * `oauthDeviceAuthorization` (device code issue at /device/code, the device_code grant at
 * /oauth2/token with authorization_pending, slow_down, access_denied and expired_token, and
 * the verify/approve/deny steps), with our policy on top:
 * - user-code guessing is rate limited per IP with one count shared by every route that takes
 *   a code (RFC 8628 §5.1: the verification step must be rate limited against brute force).
 *   better-auth's own limiter keys on IP and path, so three routes would give three times the
 *   guesses; the plugin's own rule covered GET /device only, with a window as long as the
 *   code's lifetime;
 * - the device authorization response shows the user code grouped, `WDJB-MJHT` (§6.1).
 * Clients must be registered with the grant type; DCR accepts it because the plugin adds it
 * to oauth-provider's supported grant types.
 */
export function deviceGrant(options: DeviceGrantOptions) {
  const { codeTtl = 600, pollInterval = 5, userCodeLimiter } = options;
  const plugin = oauthDeviceAuthorization({
    verificationUri: options.verificationUri,
    expiresIn: `${codeTtl}s`,
    interval: `${pollInterval}s`,
    userCodeLength: USER_CODE_LENGTH,
  });
  return {
    ...plugin,
    // The shared count below replaces the plugin's per-path rule.
    rateLimit: [],
    async onRequest(request, ctx) {
      if (!userCodeLimiter) return;
      if (!USER_CODE_PATHS.has(normalizePathname(request.url, new URL(ctx.baseURL).pathname))) return;
      const { allowed, retryAfter } = await userCodeLimiter.hit(getIP(request, ctx.options) ?? "unknown");
      if (allowed) return;
      // better-auth's own 429 shape; the app adds Retry-After (RFC 6585 §4).
      return { response: Response.json({ message: "Too many requests. Please try again later." }, { status: 429, headers: { "x-retry-after": String(retryAfter) } }) };
    },
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
