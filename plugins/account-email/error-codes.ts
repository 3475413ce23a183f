import { defineErrorCodes } from "@better-auth/core/utils/error-codes";

/** Error codes of the e-mail change and session routes, as `code` members of better-auth's `{message, code}` bodies (the plugin's `$ERROR_CODES`). */
export const ACCOUNT_EMAIL_ERROR_CODES = defineErrorCodes({
  REAUTHENTICATION_REQUIRED: "Confirm your password (currentPassword), or sign in again, to change your e-mail address.",
  INVALID_PASSWORD: "Invalid password.",
  EMAIL_IS_THE_SAME: "Email is the same",
  RESERVED_EMAIL_DOMAIN: "Addresses at bap.invalid are reserved for accounts made with an identity key. Use your own e-mail address.",
  INVALID_TOKEN: "This link is invalid, already used or expired.",
  EMAIL_UNAVAILABLE: "That e-mail address is no longer available.",
  SESSION_NOT_FOUND: "No such session.",
  TOKEN_OR_ID_REQUIRED: "Name the session by its id (or its token).",
});
