import { RAW_FORM_BODY } from "./validate.js";

/**
 * RFC 9449 §4.3: a DPoP proof's `htu` is the URI the client sent the request to, which is the
 * public one, AUTH_URL's origin. Behind a proxy (TLS ended there, another port, an instance of
 * several) the request this process sees names another origin, and every proof would be refused.
 * A request carrying a DPoP proof is therefore handed on at AUTH_URL's origin, path unchanged;
 * everything else is left as it came.
 */
export function atPublicOrigin(handler: (req: Request) => Promise<Response>, authUrl: string): (req: Request) => Promise<Response> {
  const origin = new URL(authUrl).origin;
  return (req) => handler(req.headers.has("dpop") ? withOrigin(req, origin) : req);
}

/** `req` at `origin` (the raw form text it carries kept, lib/request-body.ts). */
export function withOrigin(req: Request, origin: string): Request {
  const url = new URL(req.url);
  if (url.origin === origin) return req;
  const moved = new Request(`${origin}${url.pathname}${url.search}`, { method: req.method, headers: req.headers, body: req.body, duplex: "half" } as RequestInit);
  const raw = (req as unknown as Record<symbol, unknown>)[RAW_FORM_BODY];
  if (raw !== undefined) Object.defineProperty(moved, RAW_FORM_BODY, { value: raw });
  return moved;
}
