import type { AuthContext } from "@better-auth/core";
import { createAuthMiddleware } from "better-auth/api";
import type { Hook } from "../hooks.js";

/** How long after a passkey or identity-key sign-in a strong approval may be given, in seconds. */
export const STRONG_SIGN_IN_WINDOW = 5 * 60;

const marker = (sessionId: string) => `ciba-strong-sign-in:${sessionId}`;

/**
 * A session made by a passkey (WebAuthn) or by the person's identity key (Bitcoin-Auth key
 * sign-in) is a phishing-resistant sign-in (`acr` phr). This hook notes it for that session, for
 * STRONG_SIGN_IN_WINDOW, in better-auth's verification store (the database, or Redis when
 * configured), so any instance can tell. A sign-in that stops at the second-factor step is not
 * noted (its session is not the one the person ends up with).
 */
export function strongSignInHook(paths: readonly string[]): Hook {
  const strong = new Set(paths);
  return {
    matcher: (ctx) => strong.has(ctx.path ?? ""),
    handler: createAuthMiddleware(async (ctx) => {
      const session = ctx.context.newSession;
      const returned = ctx.context.returned as { twoFactorRedirect?: unknown } | undefined;
      if (!session || (returned && typeof returned === "object" && returned.twoFactorRedirect === true)) return;
      await ctx.context.internalAdapter.createVerificationValue({
        identifier: marker(session.session.id),
        value: session.user.id,
        expiresAt: new Date(Date.now() + STRONG_SIGN_IN_WINDOW * 1000),
      });
    }),
  };
}

/** Whether this session of `userId` was made by a strong sign-in within the window. */
export async function signedInStrongly(adapter: Pick<AuthContext["internalAdapter"], "findVerificationValue">, session: { id: string; userId: string }): Promise<boolean> {
  const found = await adapter.findVerificationValue(marker(session.id));
  return Boolean(found && found.value === session.userId && new Date(found.expiresAt) > new Date());
}
