import type { Context } from "hono";
import type { Auth } from "../../auth.config.js";
import { BASE_PATH, CLIENT_IP_HEADER } from "../../lib/transport.js";

/**
 * What every page route needs to replay a form against better-auth (same-origin check, form
 * parsing, `callAuth`, redirects that carry better-auth's cookies): one factory shared by
 * routes/pages/index.tsx and the page modules in their own files (account, two-factor
 * sign-in, invitations). Same-origin: our pages set `referrer: no-referrer`, under which the
 * Fetch standard sends `Origin: null` even for same-origin posts; then the browser-set
 * Sec-Fetch-Site decides (as in better-auth's own origin check).
 */
export interface PageKit {
  auth: Auth;
  authUrl: string;
  /** Replays a JSON POST to a better-auth endpoint for the browser, with its cookies and address. */
  callAuth(c: Context, path: string, body: Record<string, unknown>, cookie?: string): Promise<Response>;
  /** Browsers send Origin (or, under no-referrer, Sec-Fetch-Site) on every form POST: ours only. */
  sameOrigin(c: Context): boolean;
  /** The posted form's string fields; anything but a form body reads as empty. */
  form(c: Context): Promise<Record<string, string>>;
  /** 303 to `location`, carrying every cookie `upstream` set. */
  redirectWith(upstream: Response | null, location: string): Response;
  html(c: Context, node: unknown, status?: number): Response;
}

export const NO_STORE = { "cache-control": "no-store" } as const;

export function pageKit(auth: Auth, authUrl: string): PageKit {
  return {
    auth,
    authUrl,
    async callAuth(c, path, body, cookie = c.req.header("cookie")) {
      const headers = new Headers({ "content-type": "application/json", accept: "application/json", origin: authUrl });
      if (cookie) headers.set("cookie", cookie);
      const ip = c.req.header(CLIENT_IP_HEADER);
      if (ip) headers.set(CLIENT_IP_HEADER, ip);
      const ua = c.req.header("user-agent");
      if (ua) headers.set("user-agent", ua);
      return auth.handler(new Request(`${authUrl}${BASE_PATH}${path}`, { method: "POST", headers, body: JSON.stringify(body) }));
    },
    sameOrigin(c) {
      const origin = c.req.header("origin");
      if (origin && origin !== "null") return origin === authUrl;
      return c.req.header("sec-fetch-site") === "same-origin";
    },
    async form(c) {
      const type = c.req.header("content-type") ?? "";
      if (!type.startsWith("application/x-www-form-urlencoded") && !type.startsWith("multipart/form-data")) return {};
      // A malformed multipart body (no boundary, broken parts) makes the parser throw: it is not a form either.
      const data = await c.req.parseBody().catch(() => ({}));
      const out: Record<string, string> = {};
      // A value with a NUL character is no value (lib/validate.ts): the page asks for it again.
      for (const [k, v] of Object.entries(data)) if (typeof v === "string" && !v.includes("\0")) out[k] = v;
      return out;
    },
    redirectWith(upstream, location) {
      const headers = new Headers({ location, ...NO_STORE });
      for (const cookie of upstream?.headers.getSetCookie() ?? []) headers.append("set-cookie", cookie);
      return new Response(null, { status: 303, headers });
    },
    html(c, node, status = 200) {
      return c.html(`<!doctype html>${node}`, status as 200, NO_STORE);
    },
  };
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
