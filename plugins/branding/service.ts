import type { Kysely } from "kysely";
import * as v from "valibot";
import type { Database } from "../../lib/db/tables.js";
import { problem } from "../../lib/errors.js";
import { PROBLEM_CODES } from "../../lib/problem-codes.js";
import type { SafeFetch } from "../../lib/safe-fetch.js";
import { displayNameProblem } from "../../lib/user-facing.js";
import { clientExists, isClientOwnedBy } from "../oauth-store/clients.js";
import type { TierService } from "../subscriptions/ownership.js";
import { TIERS } from "../subscriptions/tiers.js";
import { BRANDING_BY_TIER, BRANDING_TIER } from "./brand.js";
import { accentContrastProblem, normalizeHexColor } from "./contrast.js";
import { fetchLogo, LogoRefused } from "./logo.js";
import * as brands from "./store.js";

/**
 * Setting a brand, one business rule for both ways in (the API, routes/branding; the account
 * page's form, routes/pages/account/branding.tsx): the caller owns the client, their tier gives
 * branding, the accent meets WCAG AA, and the logo is fetched once and checked. Refusals are
 * RFC 9457 problems (lib/problem-codes.ts), each saying why.
 */
export interface BrandingServiceDeps {
  db: Kysely<Database>;
  tiers: Pick<TierService, "tierOf">;
  /** The guarded fetcher (lib/safe-fetch.ts) the logo is fetched through. */
  safeFetch: SafeFetch;
  /** BRANDING_LOGO_MAX_BYTES. */
  logoMaxBytes: number;
}

const HttpsUrl = v.pipe(
  v.string(),
  v.maxLength(2048, "must be at most 2048 characters"),
  v.check((s) => URL.canParse(s) && new URL(s).protocol === "https:" && !new URL(s).username && !new URL(s).password, "must be an https URL (PNG, JPEG or WebP, fetched once and served by us)"),
);
const SupportUrl = v.pipe(
  v.string(),
  v.maxLength(2048, "must be at most 2048 characters"),
  v.check((s) => URL.canParse(s) && ["https:", "mailto:"].includes(new URL(s).protocol) && !new URL(s).username, "must be an https or mailto: URL"),
);
export const BrandingInput = v.strictObject({
  displayName: v.pipe(
    v.string(),
    v.transform((s) => s.trim()),
    v.minLength(1, "must not be empty"),
    v.check((s) => displayNameProblem(s, 64) === null, "must be at most 64 characters, without control characters"),
  ),
  logoUri: v.optional(v.nullable(HttpsUrl)),
  accentColor: v.optional(v.nullable(v.pipe(v.string(), v.check((s) => normalizeHexColor(s) !== null, "must be a hex colour, #rrggbb or #rgb")))),
  supportUrl: v.optional(v.nullable(SupportUrl)),
});
export type BrandingInput = v.InferOutput<typeof BrandingInput>;

/** `clientId` is `userId`'s: else 403 for a client that exists, 404 for one that does not. */
export async function assertOwnsClient(db: Kysely<Database>, userId: string, clientId: string): Promise<void> {
  if (await isClientOwnedBy(db, clientId, userId)) return;
  if (await clientExists(db, clientId)) throw problem(PROBLEM_CODES.OAUTH_CLIENT_NOT_OWNED, { detail: "That OAuth client is not yours: only the account that registered it may brand it." });
  throw problem(PROBLEM_CODES.CLIENT_NOT_FOUND);
}

/** 403 naming the tier required unless `userId`'s tier gives branding. */
export async function assertBrandingTier(tiers: Pick<TierService, "tierOf">, userId: string): Promise<void> {
  const tier = await tiers.tierOf(userId);
  if (BRANDING_BY_TIER[tier] !== "standard") return;
  throw problem(PROBLEM_CODES.BRANDING_TIER_REQUIRED, {
    detail: `Custom branding needs the ${TIERS[BRANDING_TIER].name} tier or higher (white-label needs ${TIERS.pro.name}); your tier is ${TIERS[tier].name}. Upgrade on your account page.`,
  });
}

/** Sets the brand of a client `userId` owns (checked here too). The same logoUri as stored keeps the stored image: fetched once. */
export async function setBrand(deps: BrandingServiceDeps, userId: string, clientId: string, input: BrandingInput): Promise<brands.ClientBrand> {
  const { db, tiers, safeFetch, logoMaxBytes } = deps;
  await assertOwnsClient(db, userId, clientId);
  await assertBrandingTier(tiers, userId);
  const accentColor = input.accentColor ? normalizeHexColor(input.accentColor) : null;
  const contrast = accentColor ? accentContrastProblem(accentColor) : null;
  if (contrast) throw problem(PROBLEM_CODES.ACCENT_CONTRAST_TOO_LOW, { detail: contrast, errors: [{ pointer: "/accentColor", reason: contrast }] });
  const logoUri = input.logoUri ?? null;
  const stored = await brands.findBrand(db, clientId);
  let logo: brands.StoredLogo | null | "keep" = null;
  if (logoUri && stored?.logoUri === logoUri && stored.logoHash) logo = "keep";
  else if (logoUri) {
    try {
      logo = await fetchLogo(safeFetch, logoUri, logoMaxBytes);
    } catch (err) {
      if (!(err instanceof LogoRefused)) throw err;
      throw problem(PROBLEM_CODES.LOGO_REFUSED, { detail: err.message, errors: [{ pointer: "/logoUri", reason: err.message }] });
    }
  }
  return brands.saveBrand(db, clientId, { displayName: input.displayName, logoUri, accentColor, supportUrl: input.supportUrl ?? null }, logo);
}
