import { BASE_PATH } from "../../lib/mount-paths.js";
import { CLIENT_IP_HEADER } from "../../lib/client-address.js";
import type { PageContext } from "./page-env.js";

/**
 * Form replay: each page form posts to us and we replay it as better-auth's own JSON call
 * through `auth.handler`, with the browser's cookies and address, so rate limits, origin
 * checks and the OAuth flow's hooks apply exactly as for an API client.
 */

/** The browser's cookie, address and user agent, for a call made on its behalf. */
function forwardedHeaders(c: PageContext, cookie = c.req.header("cookie")): Headers {
  const headers = new Headers({ accept: "application/json" });
  if (cookie) headers.set("cookie", cookie);
  for (const name of [CLIENT_IP_HEADER, "user-agent"]) {
    const value = c.req.header(name);
    if (value) headers.set(name, value);
  }
  return headers;
}

/** Replays a JSON POST to a better-auth endpoint for the browser, with its cookies and address. */
export function callAuth(c: PageContext, path: string, body: Record<string, unknown>, cookie?: string): Promise<Response> {
  const { auth, authUrl } = c.var.page;
  const headers = forwardedHeaders(c, cookie);
  headers.set("content-type", "application/json");
  headers.set("origin", new URL(authUrl).origin);
  return auth.handler(new Request(`${authUrl}${BASE_PATH}${path}`, { method: "POST", headers, body: JSON.stringify(body) }));
}

/** A GET of a better-auth endpoint for the browser (its per-IP rate limits apply). */
export function getFromAuth(c: PageContext, path: string, query: Record<string, string>): Promise<Response> {
  const { auth, authUrl } = c.var.page;
  return auth.handler(new Request(`${authUrl}${BASE_PATH}${path}?${new URLSearchParams(query)}`, { headers: forwardedHeaders(c) }));
}

/** The posted form's string fields; anything but a form body reads as empty. */
export async function readForm(c: PageContext): Promise<Record<string, string>> {
  const type = c.req.header("content-type") ?? "";
  if (!type.startsWith("application/x-www-form-urlencoded") && !type.startsWith("multipart/form-data")) return {};
  // A malformed multipart body (no boundary, broken parts) makes the parser throw: it is not a form either.
  const data = await c.req.parseBody().catch(() => ({}));
  const out: Record<string, string> = {};
  // A value with a NUL character is no value (lib/validate.ts): the page asks for it again.
  for (const [k, v] of Object.entries(data)) if (typeof v === "string" && !v.includes("\0")) out[k] = v;
  return out;
}

/** Where better-auth's answer sends the browser next (a resumed authorization's `url`), else `fallback`. */
export async function nextLocation(upstream: Response, fallback: string): Promise<string> {
  const data = (await upstream.clone().json().catch(() => null)) as { url?: unknown; redirect_uri?: unknown } | null;
  const next = typeof data?.url === "string" ? data.url : typeof data?.redirect_uri === "string" ? data.redirect_uri : null;
  return next ?? fallback;
}

/** better-auth's JSON error body: `{code, message}`. */
export async function upstreamError(res: Response): Promise<{ code: string | null; message: string | null }> {
  const data = (await res.clone().json().catch(() => null)) as { code?: unknown; message?: unknown } | null;
  return { code: typeof data?.code === "string" ? data.code : null, message: typeof data?.message === "string" ? data.message : null };
}

/** better-auth's message for a refused form when it is meant for people (4xx), else `fallback`. */
export async function upstreamMessage(upstream: Response, fallback: string): Promise<string> {
  if (upstream.status === 429) return "Too many attempts. Wait a minute and try again.";
  const data = (await upstream.json().catch(() => null)) as { message?: unknown } | null;
  return typeof data?.message === "string" && upstream.status < 500 ? data.message : fallback;
}
