import { defineErrorCodes } from "@better-auth/core/utils/error-codes";

/** Codes of the account surface's own answers (the account-responses plugin's `$ERROR_CODES`). */
export const ACCOUNT_RESPONSE_ERROR_CODES = defineErrorCodes({
  /**
   * No endpoint under the auth base path answers this method at this path (better-auth's
   * router answers a bare 404 there; routes/auth/better-auth.ts gives it this body).
   */
  ENDPOINT_NOT_FOUND: "No endpoint here answers this method at this path.",
  /**
   * The endpoint needs a signed-in session and the request has none (better-auth's session
   * middleware answers a bare 401 with no body; routes/auth/better-auth.ts gives it this one).
   */
  SESSION_REQUIRED: "Sign in first: this endpoint needs a session.",
});
