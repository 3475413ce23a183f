import { createHash } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import { STYLE } from "./layout.js";

/**
 * Content-Security-Policy for our HTML pages. Scripts only from our origin (the bundled
 * /assets files; no inline script, no eval), the layout's one inline style by its hash,
 * fetches only to ourselves, and no framing (the consent page must not be clickjacked).
 *
 * No `form-action`: Chromium applies it to the redirects that follow a form post, and the
 * consent form's answer redirects to the client's registered redirect URI, which can be any
 * origin or a native app's custom scheme.
 */
const styleHash = createHash("sha256").update(STYLE).digest("base64");

export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  `style-src 'sha256-${styleHash}'`,
  // Client icons on the consent page: https (or loopback http) images from registration data.
  "img-src 'self' https: http:",
  "connect-src 'self'",
  "base-uri 'none'",
  "object-src 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** Adds the policy (and its older cousins) to every HTML response of the pages. */
export function pageSecurityHeaders(): MiddlewareHandler {
  return async (c, next) => {
    await next();
    if (!c.res.headers.get("content-type")?.startsWith("text/html")) return;
    c.res.headers.set("content-security-policy", PAGE_CSP);
    c.res.headers.set("x-frame-options", "DENY");
    c.res.headers.set("x-content-type-options", "nosniff");
  };
}
