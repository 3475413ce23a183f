import { Hono, type Context } from "hono";
import { CERTIFICATE_CATALOG, certificateIconPath, certificatePagePath, certificateTypeId, findCertificateTypeBySlug, type CertificateOwner, type CertificateType } from "../../plugins/certificates/catalog.js";
import { Layout } from "./layout.js";
import type { PageEnv } from "./page-env.js";

/**
 * The certificate catalog for people (spec: landing pages under /certificates/<slug>): what
 * each type proves, who defines it, its fields and its type ID; the documentationUrl of
 * GET /api/certificates/types points here. Public and the same for everyone.
 */
const PUBLIC_PAGE = { "cache-control": "public, max-age=300" } as const;

const OWNER_WORDS: Record<CertificateOwner, string> = {
  Ecosystem: "Ecosystem: a type shared by wallets and services across the ecosystem.",
  Standard: "Standard: a type defined by a published standard.",
  Service: "Service: a type this service defines and issues.",
};

const page = (c: Context, node: unknown, status: 200 | 404 = 200) => c.html(`<!doctype html>${node}`, status, status === 200 ? PUBLIC_PAGE : { "cache-control": "no-store" });

function CatalogPage() {
  return (
    <Layout title="Certificate types" wide>
      <h1>Certificate types</h1>
      <p class="muted">
        The wallet certificates this service knows. A type's ID and field names never change; a new field or meaning gets a new type. Machine-readable: <a href="/api/certificates/types">/api/certificates/types</a>.
      </p>
      <table>
        <thead>
          <tr>
            <th>Type</th>
            <th>Owner</th>
            <th>Fields</th>
          </tr>
        </thead>
        <tbody>
          {CERTIFICATE_CATALOG.map((entry) => (
            <tr>
              <td>
                <a href={certificatePagePath(entry)}>{entry.displayName}</a>
              </td>
              <td>{entry.owner}</td>
              <td>{Object.values(entry.fields).join(", ")}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </Layout>
  );
}

function CertificateTypePage({ entry }: { entry: CertificateType }) {
  return (
    <Layout title={`${entry.displayName} certificate`} wide>
      <h1>
        <img class="icon" src={certificateIconPath(entry)} alt="" /> {entry.displayName} certificate
      </h1>
      <p>{entry.description}</p>
      <dl>
        <dt>Owner</dt>
        <dd>{OWNER_WORDS[entry.owner]}</dd>
        <dt>Type ID</dt>
        <dd>
          <code id="type-id">{certificateTypeId(entry)}</code>
        </dd>
        <dt>Catalog key</dt>
        <dd>
          <code>{entry.key}</code> (schema version {entry.schemaVersion})
        </dd>
      </dl>
      <h2>Fields</h2>
      <table>
        <thead>
          <tr>
            <th>Field</th>
            <th>Name in the certificate</th>
          </tr>
        </thead>
        <tbody>
          {Object.entries(entry.fields).map(([name, friendly]) => (
            <tr>
              <td>{friendly}</td>
              <td>
                <code>{name}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <p class="muted">
        Documentation: this page, <a href={certificatePagePath(entry)}>{certificatePagePath(entry)}</a>. All types: <a href="/certificates">the catalog</a>; for programs,{" "}
        <a href="/api/certificates/types">/api/certificates/types</a>.
      </p>
    </Layout>
  );
}

function UnknownTypePage() {
  return (
    <Layout title="Not found">
      <h1>Not found</h1>
      <p class="error" role="alert">
        There is no certificate type by that name.
      </p>
      <p>
        See <a href="/certificates">the certificate catalog</a>.
      </p>
    </Layout>
  );
}

const COLOURS: Record<CertificateOwner, string> = { Ecosystem: "#1d4ed8", Standard: "#047857", Service: "#7c2d12" };

/** A badge with the type's initials: a catalog icon that needs no outside host. */
function iconSvg(entry: CertificateType): string {
  const initials = entry.displayName
    .split(/\s+/)
    .slice(0, 2)
    .map((word) => word[0]!.toUpperCase())
    .join("");
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64" width="64" height="64"><rect width="64" height="64" rx="12" fill="${COLOURS[entry.owner]}"/><text x="32" y="41" font-family="system-ui,sans-serif" font-size="24" font-weight="700" fill="#fff" text-anchor="middle">${initials}</text></svg>`;
}

const showCatalog = (c: Context<PageEnv>) => page(c, <CatalogPage />);

function showCertificateType(c: Context<PageEnv>) {
  const entry = findCertificateTypeBySlug(c.req.param("slug") ?? "");
  return entry ? page(c, <CertificateTypePage entry={entry} />) : page(c, <UnknownTypePage />, 404);
}

function showIcon(c: Context<PageEnv>) {
  const entry = findCertificateTypeBySlug(c.req.param("slug") ?? "");
  if (!entry) return page(c, <UnknownTypePage />, 404);
  return c.body(iconSvg(entry), 200, { "content-type": "image/svg+xml", ...PUBLIC_PAGE, "content-security-policy": "default-src 'none'", "x-content-type-options": "nosniff" });
}

/** Mounted at /certificates. */
export const certificatePageRoutes = new Hono<PageEnv>().get("/", showCatalog).get("/:slug", showCertificateType).get("/:slug/icon.svg", showIcon);
