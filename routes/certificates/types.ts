import { Hono, type Context } from "hono";
import { CERTIFICATE_CATALOG, describeCertificateType } from "../../plugins/certificates/catalog.js";
import type { RouteDeps, RouteEnv } from "../middleware.js";

/** GET /api/certificates/types: the public certificate catalog (plugins/certificates/catalog.ts). */
export interface CertificateTypeDeps extends RouteDeps {
  /** AUTH_URL: documentation and icon URLs are absolute on it. */
  authUrl: string;
}

type Ctx = Context<RouteEnv<CertificateTypeDeps>>;

/** The same for everyone and fixed per release: cacheable, and readable from any origin. */
const PUBLIC_CACHE = { "cache-control": "public, max-age=300", "access-control-allow-origin": "*" } as const;

function listCertificateTypes(c: Ctx) {
  const types = CERTIFICATE_CATALOG.map((entry) => describeCertificateType(entry, c.var.deps.authUrl));
  return c.json({ types }, 200, PUBLIC_CACHE);
}

/** Mounted at /api/certificates/types. */
export const certificateTypeRoutes = new Hono<RouteEnv<CertificateTypeDeps>>().get("/", listCertificateTypes);
