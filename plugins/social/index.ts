import type { BetterAuthPlugin } from "better-auth";
import { APIError, createAuthMiddleware } from "better-auth/api";
import type { Kysely } from "kysely";
import { SOCIAL_ERROR_CODES } from "./error-codes.js";
import { idTokenNonceClaim } from "./id-token.js";
import { remainingSignInMethods } from "../sign-in-methods/index.js";
import type { Database } from "../../lib/db/tables.js";

/** Endpoints that accept a provider's ID token in `idToken{token, nonce, ...}`. */
const ID_TOKEN_PATHS = new Set(["/sign-in/social", "/link-social"]);

/**
 * Our rules around social accounts, on top of better-auth's social sign-in and genericOAuth:
 *
 * - An ID token that carries a `nonce` claim is accepted only with that nonce in the body
 *   (OIDC Core §3.1.3.7 step 11 asks the relying party to check it whenever it sent one).
 * - /unlink-account removes an account only when another way to sign in remains: a password,
 *   another account at a configured provider, a passkey or a BAP identity. better-auth's own
 *   check counts account rows only (it would keep a social-only user with a passkey from
 *   unlinking, and let a user unlink down to an account at a provider that is switched off),
 *   so auth.config sets `allowUnlinkingAll` and this rule is the one that decides.
 */
export function social(db: Kysely<Database>) {
  return {
    id: "social",
    $ERROR_CODES: SOCIAL_ERROR_CODES,
    init() {
      return {
        options: {
          databaseHooks: {
            account: {
              delete: {
                // Inside the endpoint, after its fresh-session check: a before-hook on the route
                // would not see a session carried as a bearer token.
                async before(account, ctx) {
                  if (ctx?.path !== "/unlink-account") return;
                  const left = await remainingSignInMethods(ctx.context, db, String(account.userId), String(account.id));
                  if (!left.password && !left.accounts && !left.passkeys && !left.bapIdentities) {
                    throw APIError.from("BAD_REQUEST", SOCIAL_ERROR_CODES.LAST_SIGN_IN_METHOD);
                  }
                },
              },
            },
          },
        },
      };
    },
    hooks: {
      before: [
        {
          matcher: (ctx) => ID_TOKEN_PATHS.has(ctx.path ?? ""),
          handler: createAuthMiddleware(async (ctx) => {
            const idToken = (ctx.body as { idToken?: { token?: unknown; nonce?: unknown } } | undefined)?.idToken;
            if (!idToken || typeof idToken.token !== "string") return;
            if (idTokenNonceClaim(idToken.token) !== null && (typeof idToken.nonce !== "string" || !idToken.nonce)) {
              throw APIError.from("UNAUTHORIZED", SOCIAL_ERROR_CODES.ID_TOKEN_NONCE_REQUIRED);
            }
          }),
        },
      ],
    },
  } satisfies BetterAuthPlugin;
}
