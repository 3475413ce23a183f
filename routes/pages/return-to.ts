/**
 * Where a page sends a person who must sign in first, and back again: `/sign-in?return_to=`.
 * Only a path on our own origin is honoured (never `//host`, `/\host` or a scheme: an open
 * redirect would let any link bounce a fresh session to another site), and never an API path.
 */
const PLACEHOLDER = "http://return-to.invalid";

export function safeReturnPath(value: string | null | undefined): string | null {
  if (typeof value !== "string" || !value.startsWith("/") || value.length > 2048) return null;
  if (value.startsWith("//") || value.startsWith("/\\") || /[\u0000-\u001f\\]/.test(value)) return null;
  let url: URL;
  try {
    url = new URL(value, PLACEHOLDER);
  } catch {
    return null;
  }
  if (url.origin !== PLACEHOLDER || url.pathname.startsWith("/api/")) return null;
  return url.pathname + url.search;
}

/** The sign-in page, coming back to `path` afterwards. */
export function signInThenBack(path: string): string {
  return `/sign-in?return_to=${encodeURIComponent(path)}`;
}
