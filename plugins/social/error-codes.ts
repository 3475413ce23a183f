import { defineErrorCodes } from "@better-auth/core/utils/error-codes";
import { PROBLEM_CODES } from "../../lib/problem-codes.js";

/** Error codes of social sign-in and account linking, as `code` members of better-auth's `{message, code}` bodies (the plugin's `$ERROR_CODES`). */
export const SOCIAL_ERROR_CODES = defineErrorCodes({
  /** The same words as the problem /api/user/bap-ids answers with. */
  LAST_SIGN_IN_METHOD: PROBLEM_CODES.LAST_SIGN_IN_METHOD.detail,
  ID_TOKEN_NONCE_REQUIRED: "This ID token is bound to a nonce: send it as idToken.nonce.",
});
