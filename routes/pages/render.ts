import type { Context } from "hono";

/** Pages carry a person's data or a form's answer: never cached. */
export const NO_STORE = { "cache-control": "no-store" } as const;

/** A server-rendered page (hono/jsx node) as the answer. */
export function html(c: Context, node: unknown, status = 200): Response {
  return c.html(`<!doctype html>${node}`, status as 200, NO_STORE);
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
