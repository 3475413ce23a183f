import { defineErrorCodes } from "@better-auth/core/utils/error-codes";

/** Error codes of the person's decision (/ciba/decide), as `code` members of better-auth's `{message, code}` bodies (the plugin's `$ERROR_CODES`). */
export const CIBA_ERROR_CODES = defineErrorCodes({
  REQUEST_NOT_FOUND: "No such request is waiting for you.",
  STRONG_APPROVAL_REQUIRED: "This request must be approved right after signing in with a passkey or your identity key.",
});
