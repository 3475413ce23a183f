import type { Kysely } from "kysely";

/**
 * Deletes every OAuth access and refresh token issued for `userId` (oauth-provider's
 * oauthAccessToken and oauthRefreshToken tables, as routes/authorized-apps.ts does per app),
 * so an `offline_access` grant does not outlive a password reset or an undone e-mail change
 * (OWASP ASVS V3.3.3 / V7.4.3 in 5.0: after a credential change, the other ways in end too).
 * Consents stay: apps may ask again, and the account page still lists them. Signed JWT access
 * tokens are not stored and run to their expiry (ACCESS_TOKEN_TTL).
 */
export async function revokeUserOAuthTokens(db: Kysely<any>, userId: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom("oauthAccessToken").where("userId", "=", userId).execute();
    await trx.deleteFrom("oauthRefreshToken").where("userId", "=", userId).execute();
  });
}
