import { defineErrorCodes } from "@better-auth/core/utils/error-codes";

/**
 * Codes of the subscriptions plugin's better-auth answers (its `$ERROR_CODES`). The
 * subscription routes' problem codes are in lib/problem-codes.ts.
 */
export const SUBSCRIPTION_ERROR_CODES = defineErrorCodes({
  /** create-client / register with a session: the tier's OAuth-client limit is reached. */
  CLIENT_LIMIT_REACHED: "Your tier's limit of OAuth clients is reached; upgrade to register more.",
});
