import { createHash } from "node:crypto";
import { Hono, type Context } from "hono";
import { etag } from "hono/etag";
import type { Auth } from "../auth.config.js";
import { buildOpenApiDocument } from "./index.js";
import type { RouteDeps, RouteEnv } from "../routes/middleware.js";
import { apiReferenceScript } from "../routes/pages/assets.js";

/**
 * GET /api/openapi.json: the OpenAPI 3.1.1 document (./index.ts), public and cacheable, built
 * once per process. GET /api/reference: the reference page that renders it with our own
 * bundle of Scalar (routes/pages/client/api-reference.ts).
 */
export interface OpenApiDeps extends RouteDeps {
  authUrl: string;
}
type Ctx = Context<RouteEnv<OpenApiDeps>>;

interface Built {
  body: string;
  etag: string;
}
const documents = new WeakMap<Auth, Promise<Built>>();

function documentFor(auth: Auth, authUrl: string): Promise<Built> {
  let built = documents.get(auth);
  if (!built) {
    built = buildOpenApiDocument(auth, authUrl).then((doc) => {
      const body = JSON.stringify(doc);
      return { body, etag: `"${createHash("sha256").update(body).digest("base64url")}"` };
    });
    built.catch(() => documents.delete(auth));
    documents.set(auth, built);
  }
  return built;
}

/** Public and the same for everyone: caches may keep it for five minutes, then revalidate by ETag. */
const CACHEABLE = "public, max-age=300";

const DOCUMENT_HEADERS = { "content-type": "application/json; charset=utf-8", "cache-control": CACHEABLE, "access-control-allow-origin": "*" };
/** If-None-Match answered by hono/etag, over the ETag computed once with the document; a 304 keeps these headers (not Content-Type, RFC 9110 §15.4.5). */
const revalidated = etag({ retainedHeaders: ["etag", "cache-control", "access-control-allow-origin"] });

async function openapiJson(c: Ctx) {
  const { body, etag: tag } = await documentFor(c.var.deps.auth, c.var.deps.authUrl);
  return c.body(body, 200, { ...DOCUMENT_HEADERS, etag: tag });
}

/**
 * The reference page's policy: our own script only, as the pages'; Scalar writes its styles
 * into <style> elements and style attributes at run time, so styles are 'unsafe-inline'
 * (no script runs from them); its icons and fonts are inline data: URLs.
 */
export const REFERENCE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "object-src 'none'",
  "frame-ancestors 'none'",
].join("; ");

async function referencePage(c: Ctx) {
  const script = await apiReferenceScript();
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference</title>
</head>
<body>
<div id="reference" data-document="/api/openapi.json"></div>
<script type="module" src="${script.path}"></script>
</body>
</html>`;
  return c.html(html, 200, {
    "content-security-policy": REFERENCE_CSP,
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "cache-control": "no-cache",
  });
}

/** Mounted at /api/openapi.json. */
export const openapiDocumentRoutes = new Hono<RouteEnv<OpenApiDeps>>().get("/", revalidated, openapiJson);
/** Mounted at /api/reference. */
export const apiReferenceRoutes = new Hono<RouteEnv<OpenApiDeps>>().get("/", referencePage);
