import { Hono } from "hono";
import * as v from "valibot";
import { ProblemError } from "../../../lib/errors.js";
import { BRANDING_BY_TIER, type BrandingLevel } from "../../../plugins/branding/brand.js";
import { assertOwnsClient, BrandingInput, setBrand } from "../../../plugins/branding/service.js";
import { deleteBrand, findBrands, type ClientBrand } from "../../../plugins/branding/store.js";
import { listOwnedClients } from "../../../plugins/oauth-store/clients.js";
import type { TierId } from "../../../plugins/subscriptions/tiers.js";
import { readForm } from "../form-replay.js";
import type { PageContext, PageDeps, PageEnv } from "../page-env.js";
import { PostButton } from "./account-table.js";
import { Section } from "./format.js";
import { accountForm, backWith, backWithError, backWithNotice } from "./outcome.js";

/**
 * "Branding" on the account page (docs/tiers.md "Branding"): for each client the person
 * registered, its brand, set with a plain form (the same rules as PUT
 * /api/clients/{clientId}/branding, plugins/branding/service.ts). Free: what the paid tiers
 * give instead of the form.
 */
export interface BrandingView {
  level: BrandingLevel;
  clients: { clientId: string; name: string | null; brand: ClientBrand | null }[];
}

/** The person's clients and their brands, and what their `tier` (as the plan section found it) gives. */
export async function loadBranding(deps: PageDeps, userId: string, tier: TierId): Promise<BrandingView> {
  const clients = await listOwnedClients(deps.db, userId);
  const brands = await findBrands(deps.db, clients.map((c) => c.clientId));
  return { level: BRANDING_BY_TIER[tier], clients: clients.map((c) => ({ ...c, brand: brands.get(c.clientId) ?? null })) };
}

function BrandForm(props: { clientId: string; name: string; brand: ClientBrand | null }) {
  const { clientId, brand } = props;
  const id = (field: string) => `brand-${field}-${clientId}`;
  return (
    <>
      <h3>{props.name}</h3>
      <form method="post" action="/account/branding">
        <input type="hidden" name="client_id" value={clientId} />
        <label for={id("name")}>Name shown</label>
        <input id={id("name")} name="displayName" type="text" required maxlength={64} value={brand?.displayName ?? props.name} />
        <label for={id("logo")}>Logo address (https; PNG, JPEG or WebP)</label>
        <input id={id("logo")} name="logoUri" type="text" inputmode="url" value={brand?.logoUri ?? ""} />
        <label for={id("accent")}>Accent colour (#rrggbb, at least 4.5:1 against white)</label>
        <input id={id("accent")} name="accentColor" type="text" pattern="#[0-9a-fA-F]{3}([0-9a-fA-F]{3})?" placeholder="#1d4ed8" value={brand?.accentColor ?? ""} />
        <label for={id("support")}>Support link (https or mailto:)</label>
        <input id={id("support")} name="supportUrl" type="text" inputmode="url" value={brand?.supportUrl ?? ""} />
        <button type="submit" aria-label={`Save brand for ${props.name}`}>
          Save brand
        </button>
      </form>
      {brand ? <PostButton action="/account/branding/remove" fields={{ client_id: clientId }} text="Remove brand" label={`Remove brand for ${props.name}`} block /> : null}
    </>
  );
}

export function BrandingSection(props: { view: BrandingView }) {
  const { level, clients } = props.view;
  return (
    <Section id="branding" title="Branding">
      {level === "standard" ? (
        <p class="muted">Your apps' sign-in and consent pages show the standard look. With Plus they show your brand (name, logo, accent colour, support link); with Pro, yours alone (white-label).</p>
      ) : (
        <p class="muted">{level === "white-label" ? "Pro: your apps' pages and e-mails show your brand alone." : "Plus: your apps' pages and e-mails show your brand beside ours."}</p>
      )}
      {level !== "standard" && !clients.length ? <p class="muted">You have not registered an app while signed in.</p> : null}
      {clients.map((c) =>
        level !== "standard" ? (
          <BrandForm clientId={c.clientId} name={c.name || c.clientId} brand={c.brand} />
        ) : c.brand ? (
          // Kept from a paid tier: shown again on return; it can still be removed.
          <p>
            {c.name || c.clientId}: brand “{c.brand.displayName}” kept, not shown.{" "}
            <PostButton action="/account/branding/remove" fields={{ client_id: c.clientId }} text="Remove brand" label={`Remove brand for ${c.name || c.clientId}`} />
          </p>
        ) : null,
      )}
    </Section>
  );
}

async function saveBrand(c: PageContext) {
  const { client_id: clientId = "", displayName = "", logoUri = "", accentColor = "", supportUrl = "" } = await readForm(c);
  const parsed = v.safeParse(BrandingInput, { displayName, logoUri: logoUri.trim() || null, accentColor: accentColor.trim() || null, supportUrl: supportUrl.trim() || null });
  if (!parsed.success) return backWithError(null, "branding", "INVALID_INPUT");
  const { db, billing, chrome } = c.var.page;
  try {
    await setBrand({ db, tiers: billing.tiers, safeFetch: chrome.safeFetch, logoMaxBytes: chrome.logoMaxBytes }, c.var.session.user.id, clientId, parsed.output);
  } catch (err) {
    if (err instanceof ProblemError && err.extra.code) return backWithError(null, "branding", err.extra.code);
    throw err;
  }
  return backWithNotice(null, "brand-saved", "branding");
}

async function removeBrand(c: PageContext) {
  const clientId = (await readForm(c)).client_id ?? "";
  const { db } = c.var.page;
  try {
    await assertOwnsClient(db, c.var.session.user.id, clientId);
  } catch {
    return backWithError(null, "branding", "NOT_FOUND");
  }
  return backWith(await deleteBrand(db, clientId), "brand-removed", "branding");
}

/** Mounted at /account. */
export const brandingRoutes = new Hono<PageEnv>().post("/branding", ...accountForm, saveBrand).post("/branding/remove", ...accountForm, removeBrand);
