import { defineErrorCodes } from "@better-auth/core/utils/error-codes";

/** Error codes of the user profile field rules, as `code` members of better-auth's `{message, code}` bodies (the plugin's `$ERROR_CODES`). */
export const PROFILE_FIELD_ERROR_CODES = defineErrorCodes({
  INVALID_NAME: "The name must be at most 200 characters, with no control or bidirectional control characters.",
  INVALID_IMAGE: "The image must be an https URL of at most 2048 characters.",
});
