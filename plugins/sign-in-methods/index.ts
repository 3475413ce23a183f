import type { AuthContext } from "better-auth";
import type { Kysely } from "kysely";
import { countPasskeys, findAccountRows } from "../core-store/adapter.js";
import { countIdentitiesInForce, removeBapIdentity, type RemoveResult } from "../bap-identity/store.js";
import type { Database } from "../../lib/db/tables.js";

interface AccountRow {
  id: string;
  providerId: string;
  password?: string | null;
}

/** What the count reads: better-auth's adapter and the configured providers (an AuthContext, or `await auth.$context`). */
export interface SignInMethodsContext {
  adapter: Pick<AuthContext["adapter"], "findMany" | "count">;
  socialProviders: ReadonlyArray<{ id: string }>;
}

/**
 * The "last way to sign in" rule, in one place: a person keeps at least one way in (a password,
 * an account at a configured provider, a passkey or a BAP identity in force). Social sign-in
 * (unlinking an account), passkeys (deleting one) and BAP identities (removing one) ask it.
 */

/** Whether one BAP identity in force can go and still leave a way to sign in. */
export async function canRemoveOneBapIdentity(context: SignInMethodsContext, db: Kysely<Database>, userId: string): Promise<boolean> {
  const left = await remainingSignInMethods(context, db, userId, "");
  return left.password || left.accounts > 0 || left.passkeys > 0 || left.bapIdentities > 1;
}

/**
 * The ways a person can still sign in once the account `excludeAccountId` is gone: a password
 * (a `credential` account that has one), an account at a provider that is still configured,
 * a passkey, or a BAP identity in force (key sign-in). An account at a provider since switched
 * off is not a way in, nor is a suspended identity (plugins/bap-identity/mailbox-proof.ts), so
 * neither counts.
 */
export async function remainingSignInMethods(
  context: SignInMethodsContext,
  db: Kysely<Database>,
  userId: string,
  excludeAccountId: string,
): Promise<{ password: boolean; accounts: number; passkeys: number; bapIdentities: number }> {
  const configured = new Set(context.socialProviders.map((p) => p.id));
  const [accounts, passkeys, bapIdentities] = await Promise.all([
    findAccountRows<AccountRow>(context.adapter, userId),
    countPasskeys(context.adapter, userId),
    countIdentitiesInForce(db, userId),
  ]);
  const others = accounts.filter((a) => a.id !== excludeAccountId);
  return {
    password: others.some((a) => a.providerId === "credential" && Boolean(a.password)),
    accounts: others.filter((a) => a.providerId !== "credential" && configured.has(a.providerId)).length,
    passkeys,
    bapIdentities,
  };
}

/** Removes one of the user's BAP identities unless it is an identity in force and the last way to sign in. */
export async function removeBapIdentityKeepingAWayIn(
  db: Kysely<Database>,
  context: PromiseLike<SignInMethodsContext>,
  userId: string,
  bapId: string,
): Promise<RemoveResult> {
  return removeBapIdentity(db, userId, bapId, async () => canRemoveOneBapIdentity(await context, db, userId));
}
