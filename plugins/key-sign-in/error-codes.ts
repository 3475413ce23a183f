import { defineErrorCodes } from "@better-auth/core/utils/error-codes";

/** Error codes of key sign-in, as `code` members of better-auth's `{message, code}` bodies (the plugin's `$ERROR_CODES`). */
export const KEY_SIGN_IN_ERROR_CODES = defineErrorCodes({
  INVALID_AUTH_TOKEN: "The Bitcoin-Auth token is missing, malformed, stale, already used or not signed for this request.",
  RESTORE_PROFILE_NOT_FOUND: "No registered BAP profile matches this key.",
  INVALID_BODY: 'The body must be the compact JSON object {"bapId":"..."} or {}.',
  INVALID_ENROLLMENT_PROOF: "The enrollment proof is missing or not made by the identity's member key.",
  IDENTITY_SUSPENDED: "This identity is suspended: the account's owner must confirm it on their account page before it can sign in.",
  IDENTITY_ALREADY_REGISTERED: "This BAP identity is already registered.",
  RESERVED_EMAIL_DOMAIN: "Addresses at bap.invalid are reserved for accounts made with an identity key. Use your own e-mail address.",
  REQUEST_REQUIRED: "This endpoint must be called over HTTP with the raw body.",
  /** better-auth's admin plugin's code for a banned account (its $ERROR_CODES, later in the plugin list, keeps its own words). */
  BANNED_USER: "This account is banned.",
});
