import type { BetterAuthPlugin } from "better-auth";
import { createAuthMiddleware, getSessionFromCtx, isAPIError } from "better-auth/api";
import { parseSessionOutput, parseUserOutput } from "better-auth/db";
import { isJsonObject } from "../../lib/json.js";
import { ACCOUNT_RESPONSE_ERROR_CODES } from "./error-codes.js";
import { AUTH_PATHS } from "../../lib/auth-endpoints.js";

/**
 * The default account surface's response shapes, as the spec writes them, where
 * better-auth 1.7 answers differently:
 *
 * - POST /update-session with an empty object answers `{session}` (better-auth: 400 "No
 *   fields to update"). Bodies with fields still go to better-auth.
 * - GET /verify-email answers the verified `user` when it signed that user in;
 *   better-auth answers `user: null`.
 * - POST /get-session answers as GET does (better-auth: 405 unless deferSessionRefresh).
 * - POST /sign-in/email answers `url: null` without a callbackURL (better-auth leaves `url` out).
 * - A method and path no endpoint answers gets `{message, code}` (ENDPOINT_NOT_FOUND), as the
 *   rest of the surface does, not better-auth's empty 404 (routes/auth/better-auth.ts, which also sees disabledPaths).
 */
export function accountResponses() {
  return {
    id: "account-responses",
    $ERROR_CODES: ACCOUNT_RESPONSE_ERROR_CODES,
    hooks: {
      before: [
        {
          // Spec, get-session: GET and POST. better-auth 1.7 keeps POST for `deferSessionRefresh`
          // (GET then never writes, and the client POSTs to refresh), and answers it 405 otherwise.
          // We do not defer: a POST reads, and refreshes, the session exactly as a GET does. Only
          // the endpoint sees GET; the router already ran its POST checks (Origin, CSRF).
          matcher: (ctx) => ctx.method === "POST" && ctx.path === AUTH_PATHS.getSession,
          handler: createAuthMiddleware(async () => ({ context: { method: "GET" } })),
        },
      ],
      after: [
        {
          // After, not before: before hooks do not see each other's changes, so a before hook
          // would miss the session that the bearer plugin turns into a cookie. Here the
          // endpoint's session middleware has already answered 401 without a session, and for
          // an empty object its only 400 is "No fields to update".
          matcher: (ctx) => ctx.path === "/update-session",
          handler: createAuthMiddleware(async (ctx) => {
            const returned = ctx.context.returned;
            if (!isAPIError(returned) || returned.statusCode !== 400) return;
            if (!isJsonObject(ctx.body) || Object.keys(ctx.body).length > 0) return;
            const session = await getSessionFromCtx(ctx);
            if (!session) return;
            // A Response: the dispatcher would otherwise keep the error's 400 status.
            return new Response(JSON.stringify({ session: parseSessionOutput(ctx.context.options, session.session) }), {
              status: 200,
              headers: { "content-type": "application/json" },
            });
          }),
        },
        {
          matcher: (ctx) => ctx.path === "/verify-email",
          handler: createAuthMiddleware(async (ctx) => {
            const returned = ctx.context.returned;
            if (!isJsonObject(returned) || returned.status !== true || returned.user !== null) return;
            const signedIn = ctx.context.newSession;
            if (!signedIn) return;
            const user = await ctx.context.internalAdapter.findUserById(signedIn.user.id);
            if (!user) return;
            return ctx.json({ status: true, user: parseUserOutput(ctx.context.options, user) });
          }),
        },
        {
          // Spec, sign-in/email: `url` is nullable, and there. better-auth sets it to the
          // callbackURL, so without one JSON drops the member.
          matcher: (ctx) => ctx.path === "/sign-in/email",
          handler: createAuthMiddleware(async (ctx) => {
            const returned = ctx.context.returned;
            if (!isJsonObject(returned) || !("redirect" in returned) || returned.url !== undefined) return;
            return ctx.json({ ...returned, url: null });
          }),
        },
      ],
    },
  } satisfies BetterAuthPlugin;
}
