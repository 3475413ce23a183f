import type { BetterAuthPlugin } from "better-auth";
import { APIError, createAuthMiddleware } from "better-auth/api";
import { hookOn } from "../hooks.js";
import { findPasskeyRow } from "../core-store/adapter.js";
import type { Kysely } from "kysely";
import { SOCIAL_ERROR_CODES } from "../social/error-codes.js";
import { remainingSignInMethods } from "../sign-in-methods/index.js";
import type { Database } from "../../lib/db/tables.js";

/**
 * The "last way to sign in" rule (plugins/sign-in-methods) for passkeys: POST /passkey/delete-passkey
 * refuses to remove a person's only passkey when nothing else lets them in (no password, no
 * account at a configured provider, no BAP identity).
 *
 * A before hook on the route, keyed on the passkey row itself (its owner), so it holds however
 * the caller is authenticated; the endpoint's own middleware still decides whether the caller
 * may touch that passkey at all.
 */
export function passkeyRules(db: Kysely<Database>) {
  const keepLastWayIn = hookOn(
    "/passkey/delete-passkey",
    createAuthMiddleware(async (ctx) => {
      const id = (ctx.body as { id?: unknown } | undefined)?.id;
      if (typeof id !== "string" || !id) return;
      const passkey = await findPasskeyRow<{ id: string; userId: string }>(ctx.context.adapter, id);
      if (!passkey) return;
      // No account is being removed here, so none is excluded; this passkey is, hence the - 1.
      const left = await remainingSignInMethods(ctx.context, db, passkey.userId, "");
      if (!left.password && !left.accounts && left.passkeys - 1 <= 0 && !left.bapIdentities) {
        throw APIError.from("BAD_REQUEST", SOCIAL_ERROR_CODES.LAST_SIGN_IN_METHOD);
      }
    }),
  );
  return { id: "passkey-rules", hooks: { before: [keepLastWayIn] } } satisfies BetterAuthPlugin;
}
