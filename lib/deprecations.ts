import type { MiddlewareHandler } from "hono";

/**
 * Routes on their way out (spec, Versioning 3): each answer of a listed route carries
 * `Deprecation` (RFC 9745 §2: a Structured Field Date, `@<unix seconds>`), `Sunset` when a
 * removal date is set (RFC 8594 §3: an HTTP-date), and a `Link` with `rel="deprecation"`
 * (RFC 9745 §3) to where the change is announced: the agent orientation document /llms.txt,
 * which lists the same table. Nothing is deprecated today; a listing here is a promise, so
 * it is added only with the announcement, never as an example.
 */
export interface DeprecatedRoute {
  /** HTTP method, or `*` for every method. */
  method: string;
  /**
   * Path pattern: literal segments, `:name` for one segment, and a final `*` for the rest
   * (`/api/backup/:id`, `/api/legacy/*`).
   */
  path: string;
  /** When the route was (or will be) deprecated. */
  deprecatedAt: Date;
  /** When it stops working, if decided. */
  sunsetAt?: Date;
  /** What to use instead, in one line (shown in /llms.txt). */
  note?: string;
}

export const DEPRECATED_ROUTES: readonly DeprecatedRoute[] = Object.freeze([]);

/** The announcement every deprecated answer links to. */
export const DEPRECATION_NOTICE_PATH = "/llms.txt";

/** Whether `path` matches the pattern (see DeprecatedRoute.path). */
export function matchesRoutePattern(pattern: string, path: string): boolean {
  const want = pattern.split("/");
  const have = path.split("/");
  for (let i = 0; i < want.length; i++) {
    const segment = want[i]!;
    if (segment === "*" && i === want.length - 1) return have.length > i;
    if (i >= have.length) return false;
    if (segment.startsWith(":") ? have[i] === "" : segment !== have[i]) return false;
  }
  return want.length === have.length;
}

/** The first listed route this request uses, if any. */
export function deprecationOf(table: readonly DeprecatedRoute[], method: string, path: string): DeprecatedRoute | undefined {
  return table.find((route) => (route.method === "*" || route.method.toUpperCase() === method) && matchesRoutePattern(route.path, path));
}

/** The response headers for a deprecated route: RFC 9745 Deprecation and Link, RFC 8594 Sunset. */
export function deprecationHeaders(route: DeprecatedRoute, origin: string): Record<string, string> {
  return {
    deprecation: `@${Math.floor(route.deprecatedAt.getTime() / 1000)}`,
    ...(route.sunsetAt ? { sunset: route.sunsetAt.toUTCString() } : {}),
    link: `<${origin}${DEPRECATION_NOTICE_PATH}>; rel="deprecation"; type="text/plain"`,
  };
}

/** Adds the headers to every answer of a listed route (errors included), whoever built it. */
export function deprecationNotices(table: readonly DeprecatedRoute[], origin: string): MiddlewareHandler {
  return async (c, next) => {
    await next();
    if (!table.length) return;
    const route = deprecationOf(table, c.req.method, c.req.path);
    if (!route) return;
    const headers = deprecationHeaders(route, origin);
    try {
      setAll(c.res.headers, headers);
    } catch {
      // fetch() and Response.redirect() answers have immutable headers: answer a copy.
      c.res = new Response(c.res.body, c.res);
      setAll(c.res.headers, headers);
    }
  };
}

function setAll(target: Headers, headers: Record<string, string>) {
  for (const [name, value] of Object.entries(headers)) {
    if (name === "link") target.append(name, value);
    else target.set(name, value);
  }
}
