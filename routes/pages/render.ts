import type { Context } from "hono";
import { jsx } from "hono/jsx";
import { ChromeContext, type Chrome, type ChromeVariables } from "./layout.js";

/** Pages carry a person's data or a form's answer: never cached. */
export const NO_STORE = { "cache-control": "no-store" } as const;

/** A server-rendered page (hono/jsx node) as the answer. */
export function html(c: Context, node: unknown, status = 200): Response {
  return c.html(`<!doctype html>${framed(c as Context<{ Variables: ChromeVariables }>, node)}`, status as 200, NO_STORE);
}

/** `node` inside the page chrome (layout.tsx `ChromeContext`): our name and legal links, and the brand this page shows. */
function framed(c: Context<{ Variables: ChromeVariables }>, node: unknown): unknown {
  const deps = c.var.page?.chrome;
  if (!deps) return node;
  const chrome: Chrome = { serviceName: deps.serviceName, legal: deps.legal, brand: c.var.pageBrand ?? null };
  return jsx(ChromeContext.Provider, { value: chrome }, node as never);
}

/** 303 to `location`, carrying every cookie `upstream` set. */
export function redirectWith(upstream: Response | null, location: string): Response {
  return withCookiesOf(upstream, new Response(null, { status: 303, headers: { location, ...NO_STORE } }));
}

/** `res` with the cookies better-auth set on `upstream` (a new session, an expired step cookie). */
export function withCookiesOf(upstream: Response | null, res: Response): Response {
  for (const cookie of upstream?.headers.getSetCookie() ?? []) res.headers.append("set-cookie", cookie);
  return res;
}
