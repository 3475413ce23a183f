import type { BetterAuthPlugin } from "better-auth";
import type { twoFactor } from "better-auth/plugins";

export const KEY_SIGN_IN_TWO_FACTOR_ID = "key-sign-in-two-factor";

type TwoFactorPlugin = ReturnType<typeof twoFactor>;
type AfterHook = NonNullable<NonNullable<BetterAuthPlugin["hooks"]>["after"]>[number];

/**
 * Key sign-in stops at the second-factor step, as password sign-in does, for an account with
 * two-factor on (NIST SP 800-63B §4.2: the person chose two factors; a signature with a key
 * restored from a password-protected backup is one). better-auth's two-factor plugin watches
 * its own fixed list of password routes only, so this plugin runs that same after hook, the
 * one instance `twoFactor()` returned, for POST /sign-in/<service>: the session just made is
 * taken back, a short-lived signed two-factor cookie is set and the answer is
 * `{twoFactorRedirect: true, twoFactorMethods}`; /two-factor/verify-* then makes the session.
 *
 * Listed right after `twoFactor()`, before oauthProvider: its after hook resumes a pending
 * authorization for any answer that sets a session cookie, and must not see this one.
 * Passkey sign-in is left alone: a passkey is itself multi-factor (possession plus the
 * authenticator's user verification).
 */
export function keySignInTwoFactor(options: { twoFactor: TwoFactorPlugin; signInPath: string }) {
  const passwordSignIn = { path: "/sign-in/email" };
  const hook = options.twoFactor.hooks.after.find((h) => h.matcher(passwordSignIn as never));
  // Fail closed at start-up: without the hook, key sign-in would skip the second factor unseen.
  if (!hook) throw new Error("better-auth's twoFactor plugin no longer has its sign-in hook; key sign-in cannot require the second factor");
  return {
    id: KEY_SIGN_IN_TWO_FACTOR_ID,
    hooks: { after: [{ matcher: (ctx) => ctx.path === options.signInPath, handler: hook.handler } satisfies AfterHook] },
  } satisfies BetterAuthPlugin;
}
