import { BASE_ERROR_CODES } from "@better-auth/core/error";
import type { BetterAuthPlugin } from "better-auth";
import { APIError, createAuthMiddleware } from "better-auth/api";
import { safeRedirectPath } from "../../lib/redirect-target.js";

/** Where better-auth reads a redirect target, with the code its own origin check answers for it. */
const TARGETS = [
  ["callbackURL", BASE_ERROR_CODES.INVALID_CALLBACK_URL],
  ["redirectTo", BASE_ERROR_CODES.INVALID_REDIRECT_URL],
  ["errorCallbackURL", BASE_ERROR_CODES.INVALID_ERROR_CALLBACK_URL],
  ["newUserCallbackURL", BASE_ERROR_CODES.INVALID_NEW_USER_CALLBACK_URL],
] as const;

/**
 * better-auth 1.7's callback-URL check (api/middlewares/origin-check.ts, isSafeRelativeURL)
 * refuses `//host` and `/\host` in the raw text but lets `/.//host`, `/a/..//host` or
 * `/%2e//host` through; verify-email and the reset-password callback then compose the target
 * with `new URL()`, whose dot-segment removal leaves `Location: //host`: an open redirect on our
 * origin (CWE-601, ASVS 5.1.5). Every relative target, in the body or the query of any endpoint,
 * goes through our one rule (lib/redirect-target.ts: normalise, then check) before the endpoint
 * runs; absolute URLs stay with better-auth's trusted-origin check. Refused with the same 403 and
 * code better-auth uses for a foreign callback.
 */
export function callbackUrls() {
  return {
    id: "callback-urls",
    hooks: {
      before: [
        {
          matcher: () => true,
          handler: createAuthMiddleware(async (ctx) => {
            const sources = [ctx.body, ctx.query].filter((s): s is Record<string, unknown> => Boolean(s) && typeof s === "object");
            for (const source of sources) {
              for (const [key, error] of TARGETS) {
                const value = source[key];
                if (typeof value === "string" && /^[/\\]/.test(value.trimStart()) && !safeRedirectPath(value)) throw APIError.from("FORBIDDEN", error);
              }
            }
          }),
        },
      ],
    },
  } satisfies BetterAuthPlugin;
}
