import type { AuthContext } from "better-auth";

interface AccountRow {
  id: string;
  providerId: string;
  password?: string | null;
}

/**
 * The ways a person can still sign in once the account `excludeAccountId` is gone: a password
 * (a `credential` account that has one), an account at a provider that is still configured,
 * a passkey, or a BAP identity (key sign-in). An account at a provider since switched off is
 * not a way in, so it does not count.
 */
export async function remainingSignInMethods(
  context: AuthContext,
  userId: string,
  excludeAccountId: string,
): Promise<{ password: boolean; accounts: number; passkeys: number; bapIdentities: number }> {
  const byUser = [{ field: "userId", value: userId }];
  const configured = new Set(context.socialProviders.map((p) => p.id));
  const [accounts, passkeys, bapIdentities] = await Promise.all([
    context.adapter.findMany<AccountRow>({ model: "account", where: byUser }),
    context.adapter.count({ model: "passkey", where: byUser }),
    context.adapter.count({ model: "bapIdentity", where: byUser }),
  ]);
  const others = accounts.filter((a) => a.id !== excludeAccountId);
  return {
    password: others.some((a) => a.providerId === "credential" && Boolean(a.password)),
    accounts: others.filter((a) => a.providerId !== "credential" && configured.has(a.providerId)).length,
    passkeys,
    bapIdentities,
  };
}
