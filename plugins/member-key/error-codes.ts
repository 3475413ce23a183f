/** RFC 6749 / RFC 7591 error codes this plugin answers with. */
export const MEMBER_KEY_ERRORS = {
  invalidClient: "invalid_client",
  invalidRequest: "invalid_request",
  invalidClientMetadata: "invalid_client_metadata",
} as const;
