import { APIError, createAuthEndpoint, originCheck, sensitiveSessionMiddleware } from "better-auth/api";
import { parseUserOutput } from "better-auth/db";
import type { Kysely } from "kysely";
import * as v from "valibot";
import { isKeyAccountEmail } from "../../lib/bap.js";
import type { Mailer } from "../../lib/mailer.js";
import { ACCOUNT_EMAIL_ERROR_CODES as CODES } from "./error-codes.js";
import { revokeUserOAuthTokens } from "../oauth-store/grants.js";
import { cancelPendingChange, newLinkToken, savePendingChange, saveUndo, takePendingChange, takeUndo } from "./pending.js";
import type { Database } from "../../lib/db/tables.js";

export interface ChangeEmailOptions {
  /** The shared Kysely instance (OAuth tokens are ended through it). */
  db: Kysely<Database>;
  send: Mailer;
  /** A session younger than this stands for re-authentication (s). @default 300 */
  reauthWindow: number;
  /** Lifetime of the link mailed to the new address (s). @default 3600 */
  confirmTtl: number;
  /** Lifetime of the undo link mailed to the old address (s). @default 604800 (7 days) */
  undoTtl: number;
}

const ChangeEmailBody = v.object({
  newEmail: v.pipe(v.string(), v.trim(), v.maxLength(254), v.email("newEmail must be an e-mail address")),
  callbackURL: v.nullish(v.pipe(v.string(), v.maxLength(2048))),
  currentPassword: v.optional(v.pipe(v.string(), v.maxLength(256))),
});
const LinkQuery = v.object({
  token: v.pipe(v.string(), v.minLength(1), v.maxLength(256)),
  callbackURL: v.optional(v.pipe(v.string(), v.maxLength(2048))),
});

/**
 * POST /change-email, in place of better-auth's route (same path, body and answer), and the
 * two links it mails. better-auth's route moves an unverified address at once on nothing more
 * than a session; here (OWASP ASVS V3.7.1, V2.2.3 / V6.3.7 in 5.0):
 *
 * 1. the person re-authenticates: `currentPassword` (checked by better-auth's constant-time
 *    verify), or a session signed in less than `reauthWindow` seconds ago;
 * 2. the NEW address gets a link, and the account changes only when it is followed;
 * 3. the OLD address gets a notice with an undo link, valid `undoTtl`, that puts the old
 *    address back (or cancels the pending change) and ends every session and OAuth token.
 *
 * A new address that already belongs to an account gets the same answer and no mail, so the
 * route does not tell which addresses have accounts.
 */
export function changeEmailEndpoints(options: ChangeEmailOptions) {
  const changeEmail = createAuthEndpoint(
    "/change-email",
    {
      method: "POST",
      body: ChangeEmailBody,
      use: [sensitiveSessionMiddleware, originCheck((ctx) => ctx.body?.callbackURL ?? undefined)],
    },
    async (ctx) => {
      const { user, session } = ctx.context.session;
      const newEmail = ctx.body.newEmail.toLowerCase();
      if (newEmail === user.email.toLowerCase()) throw APIError.from("BAD_REQUEST", CODES.EMAIL_IS_THE_SAME);
      // Key accounts' synthetic addresses (plugins/key-sign-in) are nobody's to move onto.
      if (isKeyAccountEmail(newEmail)) throw APIError.from("BAD_REQUEST", CODES.RESERVED_EMAIL_DOMAIN);

      if (ctx.body.currentPassword !== undefined) {
        const account = await ctx.context.internalAdapter.findCredentialAccount(user.id);
        const ok = account?.password ? await ctx.context.password.verify({ hash: account.password, password: ctx.body.currentPassword }) : false;
        if (!ok) throw APIError.from("BAD_REQUEST", CODES.INVALID_PASSWORD);
      } else if (Date.now() - new Date(session.createdAt).getTime() > options.reauthWindow * 1000) {
        throw APIError.from("FORBIDDEN", CODES.REAUTHENTICATION_REQUIRED);
      }

      const current = (await ctx.context.internalAdapter.findUserById(user.id)) ?? user;
      const from = current.email.toLowerCase();
      const taken = await ctx.context.internalAdapter.findUserByEmail(newEmail);
      const callback = ctx.body.callbackURL ? `&callbackURL=${encodeURIComponent(ctx.body.callbackURL)}` : "";

      let confirmKey: string | null = null;
      if (!taken) {
        const confirm = newLinkToken();
        confirmKey = confirm.key;
        await savePendingChange(ctx.context.internalAdapter, confirm.key, { userId: user.id, from, to: newEmail }, options.confirmTtl);
        const link = `${ctx.context.baseURL}/change-email/confirm?token=${confirm.token}${callback}`;
        await options.send({ to: newEmail, subject: "Confirm your new e-mail", text: `Someone asked to make this the e-mail address of their account. If that was you, confirm it: ${link}\n\nIf it was not you, ignore this mail: following the link would give your address to their account.` });
      }
      const undo = newLinkToken();
      await saveUndo(ctx.context.internalAdapter, undo.key, { userId: user.id, from, to: newEmail, fromVerified: Boolean(current.emailVerified), confirmKey }, options.undoTtl);
      const days = Math.max(1, Math.round(options.undoTtl / 86400));
      await options.send({
        to: from,
        subject: "Your e-mail address is being changed",
        text:
          `Someone signed in to your account asked to change its e-mail address from ${from} to ${newEmail}. ` +
          `If that was not you, follow this link within ${days} day(s): it keeps (or puts back) ${from} and signs every session out: ` +
          `${ctx.context.baseURL}/change-email/undo?token=${undo.token}`,
      });
      // The address changes only when the new one confirms: the account still has `from`.
      return ctx.json({ status: true, user: parseUserOutput(ctx.context.options, current), message: "Verification email sent" as const });
    },
  );

  const confirmEmailChange = createAuthEndpoint(
    "/change-email/confirm",
    { method: "GET", query: LinkQuery, use: [originCheck((ctx) => ctx.query?.callbackURL)] },
    async (ctx) => {
      const change = await takePendingChange(ctx.context.internalAdapter, ctx.query.token);
      const user = change ? await ctx.context.internalAdapter.findUserById(change.userId) : null;
      // The account must still have the address the change started from.
      if (!change || !user || user.email.toLowerCase() !== change.from) throw APIError.from("BAD_REQUEST", CODES.INVALID_TOKEN);
      const owner = await ctx.context.internalAdapter.findUserByEmail(change.to);
      if (owner && owner.user.id !== user.id) throw APIError.from("BAD_REQUEST", CODES.EMAIL_UNAVAILABLE);
      // Following the link proves the mailbox: the new address is verified.
      const updated = await ctx.context.internalAdapter.updateUser(user.id, { email: change.to, emailVerified: true });
      if (ctx.query.callbackURL) throw ctx.redirect(ctx.query.callbackURL);
      return ctx.json({ status: true, user: parseUserOutput(ctx.context.options, updated) });
    },
  );

  const undoEmailChange = createAuthEndpoint("/change-email/undo", { method: "GET", query: LinkQuery }, async (ctx) => {
    const undo = await takeUndo(ctx.context.internalAdapter, ctx.query.token);
    const user = undo ? await ctx.context.internalAdapter.findUserById(undo.userId) : null;
    if (!undo || !user) throw APIError.from("BAD_REQUEST", CODES.INVALID_TOKEN);
    if (undo.confirmKey) await cancelPendingChange(ctx.context.internalAdapter, undo.confirmKey);
    // Whoever asked for the change may hold a session or tokens: all of them end, restored or not.
    await ctx.context.internalAdapter.deleteUserSessions(user.id);
    await revokeUserOAuthTokens(options.db, user.id);
    if (user.email.toLowerCase() !== undo.from) {
      const owner = await ctx.context.internalAdapter.findUserByEmail(undo.from);
      if (owner && owner.user.id !== user.id) throw APIError.from("BAD_REQUEST", CODES.EMAIL_UNAVAILABLE);
      await ctx.context.internalAdapter.updateUser(user.id, { email: undo.from, emailVerified: undo.fromVerified });
    }
    return ctx.json({ status: true, message: `The account's e-mail address is ${undo.from} and every session has ended. If someone else knew your password, reset it now.` });
  });

  return { changeEmail, confirmEmailChange, undoEmailChange };
}
