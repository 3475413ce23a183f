import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { hasNulInForm, hasNulInJson, jsonTooDeep, NUL_REFUSED, RAW_FORM_BODY, TOO_DEEP_REFUSED } from "./validate.js";

/**
 * How the app reads request bodies at the edge, before any route: which requests have none,
 * the declared length the body limits check, and one read of a declared body for better-auth.
 */

/** Methods whose requests normally carry no body (RFC 9110 §9.3: no defined semantics for one). */
const BODILESS = new Set(["GET", "HEAD", "DELETE", "OPTIONS"]);

/**
 * GET, HEAD, DELETE and OPTIONS requests that announce no body (no Content-Length or a zero
 * one, not chunked). A DELETE from fetch says `Content-Length: 0`; handed on with an empty
 * stream, better-auth's router would ask it for a Content-Type (415).
 */
export function hasNoBody(req: Request): boolean {
  const length = req.headers.get("content-length");
  return BODILESS.has(req.method) && (length === null || length.trim() === "0") && !req.headers.has("transfer-encoding");
}

/** The Content-Length of a request that declares one (and is not chunked), else undefined. */
export function declaredLength(req: Request): number | undefined {
  const length = req.headers.get("content-length");
  if (length === null || req.headers.has("transfer-encoding")) return undefined;
  return parseInt(length, 10) || 0;
}

/**
 * A body limit decided from the headers where they tell it: a request with no body passes, a
 * declared length over the limit is refused (on any method: nothing reads it), and only a
 * chunked body is counted as it streams (Hono's bodyLimit). Hono's own asks the Request for its
 * body first, and @hono/node-server then builds the full Web Request, with an AbortController
 * that undici follows through a WeakRef and a FinalizationRegistry: every request of the app
 * paid for it, and what those hold survives young-generation garbage collections until a full
 * one (the soak's scavenges copied megabytes of such requests).
 */
export function declaredBodyLimit(maxSize: number, onError: (c: Context) => Response | Promise<Response>): MiddlewareHandler {
  const streamed = bodyLimit({ maxSize, onError });
  return async (c, next) => {
    const req = c.req.raw;
    if (hasNoBody(req)) return next();
    const length = declaredLength(req);
    if (length !== undefined) return length > maxSize ? onError(c) : next();
    // Chunked: a GET or HEAD has no body to count (its Request has none).
    if (req.method === "GET" || req.method === "HEAD") return next();
    return streamed(c, next);
  };
}

/**
 * better-auth reads a request body through web streams: the adapter turns the socket into
 * a ReadableStream, endpoints that re-read the body tee it, and each reader drains a copy.
 * A body whose length is declared (and already checked against the limit) is read once
 * straight from the socket instead, and better-auth gets a Request over those bytes.
 */
export async function withBufferedBody(req: Request): Promise<Request | string> {
  // A GET, HEAD, DELETE or OPTIONS without a body: a Request of its own, without the adapter's per-request
  // AbortController and socket-backed body plumbing (nothing here aborts on disconnect).
  if (hasNoBody(req)) return new Request(req.url, { method: req.method, headers: req.headers });
  // A declared empty body passes as it is; a chunked one was already read (and limited) by
  // the body-limit middleware, and is read here again from that buffer.
  if (req.method === "GET" || req.method === "HEAD" || declaredLength(req) === 0) return req;
  const body = await req.arrayBuffer();
  const buffered = new Request(req.url, { method: req.method, headers: req.headers, body });
  const type = req.headers.get("content-type")?.toLowerCase() ?? "";
  const text = utf8.decode(body);
  // A string: why the body is refused (lib/validate.ts: a NUL character, JSON nested too deeply).
  if (type.includes("application/x-www-form-urlencoded")) {
    if (hasNulInForm(text)) return NUL_REFUSED;
    // Endpoints that read a form twice (OAuth client authentication re-parses the raw form)
    // take this text instead of teeing the body (patches/better-call+1.4.5.patch).
    Object.defineProperty(buffered, RAW_FORM_BODY, { value: text });
  } else if (hasNulInJson(text)) return NUL_REFUSED;
  else if (jsonTooDeep(text)) return TOO_DEEP_REFUSED;
  return buffered;
}

const utf8 = new TextDecoder();

/** Basic credentials (RFC 6749 §2.3.1: form-encoded inside base64) that decode to a NUL. */
export function hasNulInBasic(authorization: string | undefined): boolean {
  if (!authorization || !/^basic /i.test(authorization)) return false;
  return hasNulInForm(Buffer.from(authorization.slice(6).trim(), "base64").toString("latin1"));
}
