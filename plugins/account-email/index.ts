import type { BetterAuthPlugin } from "better-auth";
import { changeEmailEndpoints, type ChangeEmailOptions } from "./change-email.js";
import { revokeSession, stripSessionTokens } from "./sessions.js";
import { ACCOUNT_EMAIL_ERROR_CODES } from "./error-codes.js";


/**
 * The account's e-mail address and sessions, where better-auth's defaults are too trusting.
 * Its endpoints take the keys of better-auth's own `changeEmail` and `revokeSession`, so they
 * replace those routes at the same paths (plugin endpoints are spread over the base ones).
 */
export function accountEmail(options: ChangeEmailOptions) {
  return {
    id: "account-email",
    $ERROR_CODES: ACCOUNT_EMAIL_ERROR_CODES,
    endpoints: { ...changeEmailEndpoints(options), revokeSession },
    hooks: { after: [stripSessionTokens] },
  } satisfies BetterAuthPlugin;
}
