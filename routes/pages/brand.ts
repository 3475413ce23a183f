import type { PageBrand } from "../../plugins/branding/brand.js";
import { verifySignedOAuthQuery } from "./oauth-query.js";
import type { PageContext } from "./page-env.js";

/**
 * The brand a page shows (plugins/branding): the brand in force of the client a person arrived
 * through, set on the request so the layout, its CSP and the flow's e-mails follow it. A client
 * is taken from a signed authorization request only (or, on the device and error pages, from
 * what our own lookups name), so nobody dresses our pages in a brand by editing a link.
 */
export async function showBrandOf(c: PageContext, clientId: string | null | undefined): Promise<PageBrand | null> {
  const brand = await c.var.page.chrome.brands.forClient(clientId);
  if (brand) c.set("pageBrand", brand);
  return brand;
}

/** The brand of the client named by `oauthQuery` (signedOAuthQuery's form), when oauth-provider signed it and it has not expired. */
export async function showBrandOfQuery(c: PageContext, oauthQuery: string | null | undefined): Promise<PageBrand | null> {
  if (!oauthQuery) return null;
  if (!(await verifySignedOAuthQuery(oauthQuery, (await c.var.page.auth.$context).secret))) return null;
  return showBrandOf(c, new URLSearchParams(oauthQuery).get("client_id"));
}
