/** Error codes of social sign-in and account linking, as `code` members of better-auth's `{message, code}` bodies. */
export const SOCIAL_ERROR_CODES = {
  LAST_SIGN_IN_METHOD: "This is your last way to sign in. Add a password, a passkey, a BAP identity or another account first.",
  ID_TOKEN_NONCE_REQUIRED: "This ID token is bound to a nonce: send it as idToken.nonce.",
} as const;
