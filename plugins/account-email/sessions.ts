import { APIError, createAuthEndpoint, createAuthMiddleware, sensitiveSessionMiddleware } from "better-auth/api";
import { deleteSessionCookie } from "better-auth/cookies";
import * as v from "valibot";
import { findSessionRow } from "../core-store/adapter.js";
import { ACCOUNT_EMAIL_ERROR_CODES } from "./error-codes.js";

/**
 * Session listings without tokens, and revocation by session id.
 *
 * A session's token is its bearer credential (the bearer plugin accepts it as is), so
 * /list-sessions must not hand every session's token to whatever page or script asks
 * (OWASP ASVS V3.2: session tokens are never exposed beyond the session they belong to).
 * Without the tokens, /revoke-session names a session by `id`; the `token` form of
 * better-auth's route still works for a caller that knows one.
 */
export const stripSessionTokens = {
  matcher: (ctx: { path?: string }) => ctx.path === "/list-sessions",
  handler: createAuthMiddleware(async (ctx) => {
    const returned = ctx.context.returned;
    if (!Array.isArray(returned)) return;
    return ctx.json(returned.map((session: Record<string, unknown>) => {
      const { token: _token, ...rest } = session;
      return rest;
    }));
  }),
};

const RevokeSessionBody = v.object({
  id: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(256))),
  token: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(1024))),
});

/** POST /revoke-session, in place of better-auth's: body `{id}` (or `{token}`); only the caller's own sessions. */
export const revokeSession = createAuthEndpoint(
  "/revoke-session",
  { method: "POST", body: RevokeSessionBody, use: [sensitiveSessionMiddleware], requireHeaders: true },
  async (ctx) => {
    const me = ctx.context.session;
    let token = ctx.body.token;
    if (ctx.body.id !== undefined) {
      const row = await findSessionRow<{ token: string; userId: string }>(ctx.context.adapter, ctx.body.id);
      // Another account's session and no session answer alike.
      if (!row || row.userId !== me.user.id || (token !== undefined && token !== row.token)) {
        throw APIError.from("NOT_FOUND", ACCOUNT_EMAIL_ERROR_CODES.SESSION_NOT_FOUND);
      }
      token = row.token;
    }
    if (token === undefined) throw APIError.from("BAD_REQUEST", ACCOUNT_EMAIL_ERROR_CODES.TOKEN_OR_ID_REQUIRED);
    // better-auth's rule for tokens: someone else's token is left alone, and the answer is the same.
    if ((await ctx.context.internalAdapter.findSession(token))?.session.userId === me.user.id) {
      await ctx.context.internalAdapter.deleteSession(token);
    }
    if (token === me.session.token) deleteSessionCookie(ctx);
    return ctx.json({ status: true });
  },
);
