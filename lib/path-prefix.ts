/**
 * An issuer with a path (AUTH_URL=https://id.example.com/idp): the service is served under that
 * path, as a reverse proxy forwards `/idp/...` to it unchanged, and answers the RFC 8414 / RFC
 * 9728 path-inserted discovery URLs at the root of the host (`/.well-known/oauth-authorization-server/idp`,
 * `/.well-known/openid-configuration/idp`, `/.well-known/oauth-protected-resource/idp/mcp`),
 * which the proxy forwards too. Inside, the app sees root paths as with a root issuer; the
 * URLs it builds start with AUTH_URL. What it answers with a root-relative target (redirects,
 * cookie paths, links and script sources in its pages) is put under the path here.
 */
type Fetch = (req: Request) => Response | Promise<Response>;

/** AUTH_URL's path without its trailing slash: "" for a root issuer. */
export function issuerPath(authUrl: string): string {
  return new URL(authUrl).pathname.replace(/\/+$/, "");
}

/** The discovery documents answered at the root of the host for an issuer with a path: public path → the app's own. */
export function pathInsertedDiscovery(prefix: string): Map<string, string> {
  return new Map([
    [`/.well-known/oauth-authorization-server${prefix}`, "/.well-known/oauth-authorization-server"],
    [`/.well-known/openid-configuration${prefix}`, "/.well-known/openid-configuration"],
    [`/.well-known/oauth-protected-resource${prefix}/mcp`, "/.well-known/oauth-protected-resource/mcp"],
  ]);
}

/** The app's `fetch`, served under AUTH_URL's path (the app itself when the issuer has none). */
export function servedUnder(fetch: Fetch, authUrl: string): Fetch {
  const prefix = issuerPath(authUrl);
  if (!prefix) return fetch;
  const discovery = pathInsertedDiscovery(prefix);
  const underPrefix = (path: string) => (path.startsWith("/") && !path.startsWith("//") && !path.startsWith("/\\") && !path.startsWith(`${prefix}/`) && path !== prefix ? `${prefix}${path}` : path);
  return async (req) => {
    const url = new URL(req.url);
    let inner = discovery.get(url.pathname);
    if (inner === undefined && (url.pathname === prefix || url.pathname.startsWith(`${prefix}/`))) inner = url.pathname.slice(prefix.length) || "/";
    if (inner === undefined) {
      return new Response(JSON.stringify({ type: "about:blank", title: "Not Found", status: 404, detail: `This service is at ${authUrl}.` }), {
        status: 404,
        headers: { "content-type": "application/problem+json" },
      });
    }
    url.pathname = inner;
    const hasBody = req.method !== "GET" && req.method !== "HEAD";
    const res = await fetch(new Request(url, { method: req.method, headers: req.headers, body: hasBody ? req.body : null, ...(hasBody ? { duplex: "half" } : {}) } as RequestInit));
    return rebase(res, prefix, underPrefix);
  };
}

const ROOT_RELATIVE_ATTRIBUTE = /\b(href|src|action|formaction|data-[\w-]+)="(\/(?![/\\])[^"]*)"/g;

/** Root-relative targets in an answer of the app, put under the prefix. */
async function rebase(res: Response, prefix: string, underPrefix: (path: string) => string): Promise<Response> {
  const headers = new Headers(res.headers);
  const location = headers.get("location");
  if (location) headers.set("location", underPrefix(location));
  const cookies = headers.getSetCookie();
  if (cookies.length) {
    headers.delete("set-cookie");
    for (const cookie of cookies) headers.append("set-cookie", cookie.replace(/;\s*Path=(\/[^;]*)/i, (_m, path: string) => `; Path=${path === "/" ? prefix : underPrefix(path)}`));
  }
  if (!headers.get("content-type")?.startsWith("text/html") || res.body === null) {
    return new Response(res.body, { status: res.status, statusText: res.statusText, headers });
  }
  const text = (await res.text()).replace(ROOT_RELATIVE_ATTRIBUTE, (_m, name: string, path: string) => `${name}="${underPrefix(path)}"`);
  headers.delete("content-length");
  return new Response(text, { status: res.status, statusText: res.statusText, headers });
}
