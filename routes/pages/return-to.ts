import { safeRedirectPath } from "../../lib/redirect-target.js";

/**
 * Where a page sends a person who must sign in first, and back again: `/sign-in?return_to=`.
 * Only a path on our own origin is honoured (lib/redirect-target.ts: normalised first, then
 * checked, so no `//host`, `/\host`, `/.//host` or scheme survives: an open redirect would let
 * any link bounce a fresh session to another site), and never an API path.
 */
export function safeReturnPath(value: string | null | undefined): string | null {
  const path = safeRedirectPath(value);
  return path && !path.startsWith("/api/") ? path : null;
}

/** The sign-in page, coming back to `path` afterwards. */
export function signInThenBack(path: string): string {
  return `/sign-in?return_to=${encodeURIComponent(path)}`;
}
