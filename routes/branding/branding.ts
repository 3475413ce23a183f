import { Hono, type Context } from "hono";
import type { Auth } from "../../auth.config.js";
import { problem, problems } from "../../lib/errors.js";
import { PROBLEM_CODES } from "../../lib/problem-codes.js";
import { readJson } from "../../lib/validate.js";
import { logoPath, type BrandResolver } from "../../plugins/branding/brand.js";
import { assertBrandingTier, assertOwnsClient, BrandingInput, setBrand, type BrandingServiceDeps } from "../../plugins/branding/service.js";
import * as brands from "../../plugins/branding/store.js";
import { noStore, signedIn, type RouteEnv } from "../middleware.js";

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
export interface BrandingDeps extends BrandingServiceDeps {
  auth: Auth;
  brands: BrandResolver;
}

type BrandingEnv = RouteEnv<BrandingDeps>;
type C = Context<BrandingEnv>;

/** The client of the path, which must be the caller's. */
async function ownedClientId(c: C): Promise<string> {
  const clientId = c.req.param("clientId") ?? "";
  await assertOwnsClient(c.var.deps.db, c.var.session.user.id, clientId);
  return clientId;
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

async function putBranding(c: C) {
  const clientId = await ownedClientId(c);
  await assertBrandingTier(c.var.deps.tiers, c.var.session.user.id);
  const { value: body } = await readJson(c, BrandingInput, 8 * 1024);
  return c.json(await view(c, await setBrand(c.var.deps, c.var.session.user.id, clientId, body)), 200);
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
