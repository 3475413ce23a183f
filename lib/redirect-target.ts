/**
 * The one rule for a relative redirect target (our `return_to`, better-auth's callbackURL,
 * redirectTo, errorCallbackURL, newUserCallbackURL) and for every `Location` we emit.
 *
 * OWASP ASVS 5.1.5 / CWE-601: a redirect must stay on our origin. The check runs on the
 * NORMALISED path, the one a browser will actually request: RFC 3986 §5.2.4 dot-segment
 * removal (also of `%2e`, WHATWG URL "single/double-dot segment") turns `/.//evil.example/x`,
 * `/a/..//evil.example/x` or `/%2e%2e//evil.example/x` into `//evil.example/x`, which RFC 3986
 * §4.2 reads as a network-path reference: another host. Checking the raw text first and
 * normalising afterwards is exactly the bypass, so here it is normalise, then check.
 */
const PLACEHOLDER = "http://redirect-target.invalid";

/** Control characters (the URL parser silently drops tab/CR/LF) and backslashes (read as `/`). */
const AMBIGUOUS = /[\u0000-\u001f\u007f-\u009f\\]/;
/** Encoded `/` or `\` in a path: some routers and proxies decode them into separators. */
const ENCODED_SEPARATOR = /%2f|%5c/i;

/**
 * `value` as a normalised path (+ query) on our own origin, or null when it is not one:
 * not starting with a single `/`, carrying control characters or backslashes, or resolving
 * to anything a browser would read as another host.
 */
export function safeRedirectPath(value: unknown, maxLength = 2048): string | null {
  if (typeof value !== "string" || !value.startsWith("/") || value.length > maxLength || AMBIGUOUS.test(value)) return null;
  const pathEnd = value.search(/[?#]/);
  if (ENCODED_SEPARATOR.test(pathEnd === -1 ? value : value.slice(0, pathEnd))) return null;
  let url: URL;
  try {
    url = new URL(value, PLACEHOLDER);
  } catch {
    return null;
  }
  const path = url.pathname + url.search;
  if (url.origin !== PLACEHOLDER || isNetworkPathReference(path)) return null;
  return path;
}

/**
 * A `Location` (or any URL reference) a browser resolves against another host: after the
 * WHATWG URL parser's own clean-up (leading C0 controls and spaces stripped, tab/CR/LF
 * removed anywhere) it begins with two slashes, in either direction.
 */
export function isNetworkPathReference(location: string): boolean {
  const cleaned = location.replace(/^[\u0000-\u0020]+/, "").replace(/[\t\n\r]/g, "");
  return /^[/\\]{2}/.test(cleaned);
}
