import { defineRequestState } from "@better-auth/core/context";
import type { BetterAuthPlugin } from "better-auth";
import { createAuthMiddleware, isAPIError } from "better-auth/api";
import { decodeJwt } from "jose";
import type { Kysely } from "kysely";
import { deletePasskeys } from "../core-store/adapter.js";
import { suspendBapIdentities } from "./store.js";
import type { Database } from "../../lib/db/tables.js";

/**
 * Pre-account hijacking (OWASP ASVS 5.0 V6.4 / "account pre-hijacking", Sudhodanan & Paverd
 * 2022): with e-mail verification off anyone can open an account under someone else's address
 * and attach a way in of their own (a BAP identity, a passkey, a social account) before the
 * owner arrives. When the owner later proves the mailbox, nothing attached while the address
 * was unproven may keep working unseen. A proof here is a completed password reset (the link
 * went to the mailbox) or a completed e-mail verification, on an account whose address was
 * still unverified. Then:
 *
 * - BAP identities are suspended: refused at key sign-in and left out of tokens until the owner
 *   confirms (or removes) them on /account or at /api/user/bap-ids. They are kept, not deleted:
 *   a bapId is unique and only its member key can register it again, so the owner's own
 *   identity comes back with one click.
 * - Passkeys and linked social accounts are removed, as better-auth's own
 *   revokeUnprovenAccountAccess does for magic-link and e-mail OTP proofs: the owner adds
 *   their own again in a minute.
 * - Every other session ends (a reset ends them all already; a verification keeps only the
 *   session it signs in), so no one who held the account before can confirm anything.
 * - The address counts as verified from then on (a reset link proves the mailbox as well as a
 *   verification link does), so what the owner adds afterwards is not treated as unproven.
 */

/** The account a proof in this request is about, found before the endpoint spends the token. */
const pendingProof = defineRequestState<{ userId: string } | null>(() => null);

type HookContext = Parameters<Parameters<typeof createAuthMiddleware>[0]>[0];

async function unverifiedUser(ctx: HookContext, userId: string | null | undefined) {
  if (!userId) return null;
  const user = await ctx.context.internalAdapter.findUserById(userId);
  return user && !user.emailVerified ? user : null;
}

/** POST /reset-password: the token names the account (a valid one; the endpoint still checks it). */
async function resetTarget(ctx: HookContext): Promise<string | null> {
  const token = (ctx.body as { token?: unknown } | undefined)?.token ?? (ctx.query as { token?: unknown } | undefined)?.token;
  if (typeof token !== "string" || !token) return null;
  const verification = await ctx.context.internalAdapter.findVerificationValue(`reset-password:${token}`);
  if (!verification || verification.expiresAt < new Date()) return null;
  return verification.value;
}

/**
 * GET /verify-email: the token names the address (read unverified here; the endpoint verifies
 * the signature, and the after hook acts only if the account did become verified). A change of
 * address (`updateTo`) proves the new mailbox, not the account's, so it is not a proof here.
 */
async function verificationTarget(ctx: HookContext): Promise<string | null> {
  const token = (ctx.query as { token?: unknown } | undefined)?.token;
  if (typeof token !== "string" || !token) return null;
  let claims: Record<string, unknown>;
  try {
    claims = decodeJwt(token);
  } catch {
    return null;
  }
  if (typeof claims.email !== "string" || claims.updateTo !== undefined) return null;
  const found = await ctx.context.internalAdapter.findUserByEmail(claims.email);
  return found?.user.id ?? null;
}

async function voidUnprovenSignInMethods(ctx: HookContext, db: Kysely<Database>, userId: string, keepSessionToken: string | null) {
  const { internalAdapter, adapter } = ctx.context;
  await suspendBapIdentities(db, userId);
  await deletePasskeys(adapter, userId);
  for (const account of await internalAdapter.findAccounts(userId)) {
    if (account.providerId !== "credential") await internalAdapter.deleteAccount(account.id);
  }
  if (keepSessionToken) {
    for (const session of await internalAdapter.listSessions(userId)) {
      if (session.token !== keepSessionToken) await internalAdapter.deleteSession(session.token);
    }
  } else {
    await internalAdapter.deleteUserSessions(userId);
  }
  await internalAdapter.updateUser(userId, { emailVerified: true });
}

export function mailboxProof(db: Kysely<Database>) {
  const isProof = (ctx: { path?: string }) => ctx.path === "/reset-password" || ctx.path === "/verify-email";
  return {
    before: [
      {
        matcher: isProof,
        handler: createAuthMiddleware(async (ctx) => {
          const userId = ctx.path === "/reset-password" ? await resetTarget(ctx) : await verificationTarget(ctx);
          const user = await unverifiedUser(ctx, userId);
          if (user) await pendingProof.set({ userId: user.id });
        }),
      },
    ],
    after: [
      {
        matcher: isProof,
        handler: createAuthMiddleware(async (ctx) => {
          const pending = await pendingProof.get();
          if (!pending) return;
          await pendingProof.set(null);
          if (ctx.path === "/reset-password") {
            // Only a reset that went through (its token spent, the password set) is a proof.
            const returned = ctx.context.returned;
            if (isAPIError(returned) || (returned as { status?: unknown } | undefined)?.status !== true) return;
            await voidUnprovenSignInMethods(ctx, db, pending.userId, null);
            return;
          }
          // /verify-email answers with a redirect as often as with JSON: what counts is that the
          // account is verified now and was not before this request.
          const user = await ctx.context.internalAdapter.findUserById(pending.userId);
          if (!user?.emailVerified) return;
          const signedIn = ctx.context.newSession;
          await voidUnprovenSignInMethods(ctx, db, pending.userId, signedIn?.user.id === pending.userId ? signedIn.session.token : null);
        }),
      },
    ],
  } satisfies NonNullable<BetterAuthPlugin["hooks"]>;
}
