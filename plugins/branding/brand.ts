import type { Kysely } from "kysely";
import type { Database } from "../../lib/db/tables.js";
import { findClientOwner } from "../oauth-store/clients.js";
import type { TierService } from "../subscriptions/ownership.js";
import type { TierId } from "../subscriptions/tiers.js";
import { findBrand, type ClientBrand } from "./store.js";

/**
 * Which tier gives what look (docs/tiers.md "Branding"): Free, the standard pages with the
 * client's registered name; Plus, the client's brand beside this service's name; Pro,
 * white-label: the client's brand alone. The tier is the owner's, from the tier service, so a
 * lapsed tier falls back to the standard look with the brand kept for a return.
 */
export type BrandingLevel = "standard" | "custom" | "white-label";
export const BRANDING_BY_TIER: Readonly<Record<TierId, BrandingLevel>> = { free: "standard", plus: "custom", pro: "white-label" };
/** The lowest tier with custom branding, named in the API's refusal. */
export const BRANDING_TIER: TierId = "plus";

/** The path the logo is served at; `v` (its hash) makes every version its own URL, cached for good. */
export function logoPath(clientId: string, hash: string): string {
  return `/api/clients/${encodeURIComponent(clientId)}/branding/logo?v=${hash.slice(0, 16)}`;
}

/** A brand in force, as pages and e-mails show it. */
export interface PageBrand {
  clientId: string;
  displayName: string;
  /** Our own URL of the stored logo, or null. */
  logoSrc: string | null;
  accentColor: string | null;
  supportUrl: string | null;
  /** Pro: no trace of this service's own name. */
  whiteLabel: boolean;
}

export function toPageBrand(brand: ClientBrand, level: Exclude<BrandingLevel, "standard">): PageBrand {
  return {
    clientId: brand.clientId,
    displayName: brand.displayName,
    logoSrc: brand.logoHash ? logoPath(brand.clientId, brand.logoHash) : null,
    accentColor: brand.accentColor,
    supportUrl: brand.supportUrl,
    whiteLabel: level === "white-label",
  };
}

export type BrandResolver = ReturnType<typeof brandResolver>;

/**
 * The brand in force for a client: its stored brand when its owner's tier gives one, else null
 * (the standard look). One indexed read for a client without a brand; the owner's tier (cached
 * by the tier service) only when there is one. A tier that cannot be checked at all reads as
 * the last recorded one (TierService.tierOf).
 */
export function brandResolver(deps: { db: Kysely<Database>; tiers: Pick<TierService, "tierOf"> }) {
  async function levelOf(clientId: string): Promise<BrandingLevel> {
    const owner = await findClientOwner(deps.db, clientId);
    return owner ? BRANDING_BY_TIER[await deps.tiers.tierOf(owner)] : "standard";
  }
  return {
    levelOf,
    async forClient(clientId: string | null | undefined): Promise<PageBrand | null> {
      if (!clientId) return null;
      const brand = await findBrand(deps.db, clientId);
      if (!brand) return null;
      const level = await levelOf(clientId);
      return level === "standard" ? null : toPageBrand(brand, level);
    },
  };
}
