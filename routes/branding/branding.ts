import { Hono, type Context } from "hono";
import type { Kysely } from "kysely";
import * as v from "valibot";
import type { Auth } from "../../auth.config.js";
import { problem, problems } from "../../lib/errors.js";
import { PROBLEM_CODES } from "../../lib/problem-codes.js";
import type { SafeFetch } from "../../lib/safe-fetch.js";
import { displayNameProblem } from "../../lib/user-facing.js";
import { readJson } from "../../lib/validate.js";
import { BRANDING_BY_TIER, BRANDING_TIER, logoPath, type BrandResolver } from "../../plugins/branding/brand.js";
import { accentContrastProblem, normalizeHexColor } from "../../plugins/branding/contrast.js";
import { fetchLogo, LogoRefused } from "../../plugins/branding/logo.js";
import * as brands from "../../plugins/branding/store.js";
import { clientExists, isClientOwnedBy } from "../../plugins/oauth-store/clients.js";
import type { TierService } from "../../plugins/subscriptions/ownership.js";
import { TIERS } from "../../plugins/subscriptions/tiers.js";
import { noStore, signedIn, type RouteEnv } from "../middleware.js";
import type { Database } from "../../lib/db/tables.js";

/**
 * A client's brand (docs/tiers.md "Branding"; the owner's session):
 *
 *   PUT    /{clientId}/branding        displayName, logoUri?, accentColor?, supportUrl? -> 200, the brand
 *   GET    /{clientId}/branding        the brand, and whether the pages show it now
 *   DELETE /{clientId}/branding        204
 *   GET    /{clientId}/branding/logo   the stored logo (public, cached; what the pages load)
 *
 * Only the client's owner (who registered it while signed in) manages its brand: an unknown
 * client is 404, someone else's 403. Setting one needs the owner's tier to give branding (Plus
 * or Pro; the tier service decides, so a lapsed tier is refused too); a brand kept from a
 * lapsed tier can still be read and deleted.
 */
export interface BrandingDeps {
  auth: Auth;
  db: Kysely<Database>;
  tiers: Pick<TierService, "tierOf">;
  brands: BrandResolver;
  /** The guarded fetcher (lib/safe-fetch.ts) the logo is fetched through. */
  safeFetch: SafeFetch;
  /** BRANDING_LOGO_MAX_BYTES. */
  logoMaxBytes: number;
}

type BrandingEnv = RouteEnv<BrandingDeps>;
type C = Context<BrandingEnv>;

const HttpsUrl = (what: string) =>
  v.pipe(
    v.string(),
    v.maxLength(2048, "must be at most 2048 characters"),
    v.check((s) => URL.canParse(s) && new URL(s).protocol === "https:" && !new URL(s).username && !new URL(s).password, `must be an https URL (${what})`),
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
  logoUri: v.optional(v.nullable(HttpsUrl("PNG, JPEG or WebP, fetched once and served by us"))),
  accentColor: v.optional(v.nullable(v.pipe(v.string(), v.check((s) => normalizeHexColor(s) !== null, "must be a hex colour, #rrggbb or #rgb")))),
  supportUrl: v.optional(v.nullable(SupportUrl)),
});

/** The client of the path, which must be the caller's. */
async function ownedClientId(c: C): Promise<string> {
  const clientId = c.req.param("clientId") ?? "";
  const { db } = c.var.deps;
  if (await isClientOwnedBy(db, clientId, c.var.session.user.id)) return clientId;
  if (await clientExists(db, clientId)) throw problem(PROBLEM_CODES.OAUTH_CLIENT_NOT_OWNED, { detail: "That OAuth client is not yours: only the account that registered it may brand it." });
  throw problem(PROBLEM_CODES.CLIENT_NOT_FOUND);
}

async function view(c: C, brand: brands.ClientBrand) {
  const level = await c.var.deps.brands.levelOf(brand.clientId);
  return {
    clientId: brand.clientId,
    displayName: brand.displayName,
    logoUri: brand.logoUri,
    logoUrl: brand.logoHash ? logoPath(brand.clientId, brand.logoHash) : null,
    accentColor: brand.accentColor,
    supportUrl: brand.supportUrl,
    /** Whether the pages show it now: the owner's tier gives branding. */
    shown: level !== "standard",
    whiteLabel: level === "white-label",
    updatedAt: brand.updatedAt.toISOString(),
  };
}

async function requireBrandingTier(c: C) {
  const tier = await c.var.deps.tiers.tierOf(c.var.session.user.id);
  if (BRANDING_BY_TIER[tier] !== "standard") return;
  throw problem(PROBLEM_CODES.BRANDING_TIER_REQUIRED, {
    detail: `Custom branding needs the ${TIERS[BRANDING_TIER].name} tier or higher (white-label needs ${TIERS.pro.name}); your tier is ${TIERS[tier].name}. Upgrade on your account page.`,
  });
}

async function putBranding(c: C) {
  const clientId = await ownedClientId(c);
  await requireBrandingTier(c);
  const { value: body } = await readJson(c, BrandingInput, 8 * 1024);
  const accentColor = body.accentColor ? normalizeHexColor(body.accentColor) : null;
  const contrast = accentColor ? accentContrastProblem(accentColor) : null;
  if (contrast) throw problem(PROBLEM_CODES.ACCENT_CONTRAST_TOO_LOW, { detail: contrast, errors: [{ pointer: "/accentColor", reason: contrast }] });
  const { db, safeFetch, logoMaxBytes } = c.var.deps;
  const logoUri = body.logoUri ?? null;
  const stored = await brands.findBrand(db, clientId);
  // The logo is fetched once: the same logoUri keeps the image already stored.
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
  const brand = await brands.saveBrand(db, clientId, { displayName: body.displayName, logoUri, accentColor, supportUrl: body.supportUrl ?? null }, logo);
  return c.json(await view(c, brand), 200);
}

async function getBranding(c: C) {
  const clientId = await ownedClientId(c);
  const brand = await brands.findBrand(c.var.deps.db, clientId);
  if (!brand) throw problem(PROBLEM_CODES.BRANDING_NOT_FOUND);
  return c.json(await view(c, brand), 200);
}

async function deleteBranding(c: C) {
  const clientId = await ownedClientId(c);
  if (!(await brands.deleteBrand(c.var.deps.db, clientId))) throw problem(PROBLEM_CODES.BRANDING_NOT_FOUND);
  return c.body(null, 204);
}

/**
 * The logo the pages show, from our own origin: only while the brand is in force. Its URL
 * carries the image's hash, so each version is cached for good; `nosniff` and a sandboxing CSP
 * keep it an image whatever a browser makes of its bytes.
 */
async function serveLogo(c: C) {
  const clientId = c.req.param("clientId") ?? "";
  const { db, brands: resolver } = c.var.deps;
  const logo = (await resolver.forClient(clientId))?.logoSrc ? await brands.findLogo(db, clientId) : null;
  if (!logo) throw problems.notFound("This client shows no logo.");
  const etag = `"${logo.hash}"`;
  const versioned = c.req.query("v") === logo.hash.slice(0, 16);
  const headers = {
    "content-type": logo.type,
    etag,
    "cache-control": versioned ? "public, max-age=31536000, immutable" : "public, max-age=300",
    "x-content-type-options": "nosniff",
    "content-security-policy": "default-src 'none'; sandbox",
    "cross-origin-resource-policy": "same-origin",
  };
  if (c.req.header("if-none-match") === etag) return c.body(null, 304, headers);
  return c.body(new Uint8Array(logo.bytes), 200, headers);
}

/** The client-branding family (app.ts): /api/clients; the owner's routes signed in and no-store, the logo public. */
export const brandingRoutes = new Hono<BrandingEnv>()
  .get("/:clientId/branding/logo", serveLogo)
  .put("/:clientId/branding", noStore, signedIn, putBranding)
  .get("/:clientId/branding", noStore, signedIn, getBranding)
  .delete("/:clientId/branding", noStore, signedIn, deleteBranding);
