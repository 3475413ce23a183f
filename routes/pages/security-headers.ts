import { createHash } from "node:crypto";
import type { Context, MiddlewareHandler } from "hono";
import { secureHeaders } from "hono/secure-headers";
import { brandCss, STYLE, type ChromeVariables } from "./layout.js";

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

/** The layout's style, and on a branded page its accent style (layout.tsx `brandCss`) too, by their hashes. */
function styleSources(c: Context): string {
  const css = brandCss((c as Context<{ Variables: ChromeVariables }>).var.pageBrand);
  return css ? `'sha256-${styleHash}' 'sha256-${createHash("sha256").update(css).digest("base64")}'` : `'sha256-${styleHash}'`;
}

/** Our own images only on a branded page (its logo is served by us); else also the icons clients registered. */
function brandImageSources(c: Context): string {
  return (c as Context<{ Variables: ChromeVariables }>).var.pageBrand ? "'self'" : "'self' https: http:";
}

const PAGE_CSP = {
  defaultSrc: ["'none'"],
  scriptSrc: ["'self'"],
  styleSrc: [styleSources],
  // Client icons on the consent page: https (or loopback http) images from registration data.
  // A branded client's page loads its logo from us only (brandImageSources).
  imgSrc: [brandImageSources],
  connectSrc: ["'self'"],
  baseUri: ["'none'"],
  objectSrc: ["'none'"],
  frameAncestors: ["'none'"],
};

/** hono/secure-headers with the policy and its older cousins only (X-Frame-Options, X-Content-Type-Options); the rest of its set is off. */
const pageHeaders = secureHeaders({
  contentSecurityPolicy: PAGE_CSP,
  xFrameOptions: "DENY",
  xContentTypeOptions: true,
  crossOriginResourcePolicy: false,
  crossOriginOpenerPolicy: false,
  originAgentCluster: false,
  referrerPolicy: false,
  strictTransportSecurity: false,
  xDnsPrefetchControl: false,
  xDownloadOptions: false,
  xPermittedCrossDomainPolicies: false,
  xXssProtection: false,
  removePoweredBy: false,
});
const answered = async () => {};

/** Adds them to every HTML response of the pages (not to scripts, redirects or problems). */
export function pageSecurityHeaders(): MiddlewareHandler {
  return async (c, next) => {
    await next();
    if (!c.res.headers.get("content-type")?.startsWith("text/html")) return;
    // The answer is already there: secure-headers runs on it with nothing left to call.
    await pageHeaders(c, answered);
  };
}
