import { APIError } from "better-auth/api";
import type { OAuthErrorCode } from "../../lib/errors.js";

/** An RFC 6749 error object (CIBA §13 at the backchannel endpoint, §11 at the token endpoint). */
export function refuse(error: OAuthErrorCode, description: string, status: "BAD_REQUEST" | "UNAUTHORIZED" | "FORBIDDEN" = "BAD_REQUEST"): never {
  throw new APIError(status, { error, error_description: description });
}
