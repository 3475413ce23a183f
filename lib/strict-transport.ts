import type { MiddlewareHandler } from "hono";

/** Two years, subdomains included: the values HSTS preload lists ask for (RFC 6797 §6.1). */
export const STRICT_TRANSPORT_SECURITY = "max-age=63072000; includeSubDomains";

/**
 * Sends Strict-Transport-Security on every answer (OWASP ASVS V9.1.1 / V3.4.1 in 5.0), so a
 * browser that has reached us once over https never again tries plain http, where a network
 * attacker could strip TLS. Mounted only when AUTH_URL is https (RFC 6797 §7.2: a host
 * ignores the header over plain http, and a development http origin must not be pinned).
 */
export function strictTransportSecurity(): MiddlewareHandler {
  return async (c, next) => {
    await next();
    try {
      c.res.headers.set("strict-transport-security", STRICT_TRANSPORT_SECURITY);
    } catch {
      // Response.redirect() and fetch() answers have immutable headers: answer a copy.
      c.res = new Response(c.res.body, c.res);
      c.res.headers.set("strict-transport-security", STRICT_TRANSPORT_SECURITY);
    }
  };
}
