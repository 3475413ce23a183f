import { APIError } from "better-auth/api";
import type { OAuthErrorCode } from "../../lib/errors.js";

/** An RFC 6749 error object (CIBA §13 at the backchannel endpoint, §11 at the token endpoint). */
export function refuse(error: OAuthErrorCode, description: string, status: "BAD_REQUEST" | "UNAUTHORIZED" | "FORBIDDEN" = "BAD_REQUEST"): never {
  throw new APIError(status, { error, error_description: description });
}

/** Page-facing decision errors, better-auth style `{code, message}` (routes/pages/ciba.tsx words them). */
export const CIBA_DECISION_ERRORS = {
  NOT_FOUND: "No such request is waiting for you",
  STRONG_APPROVAL_REQUIRED: "This request must be approved right after signing in with a passkey or your identity key",
} as const;
