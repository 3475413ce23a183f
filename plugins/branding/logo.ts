import { createHash } from "node:crypto";
import { OutboundRefused, type SafeFetch } from "../../lib/safe-fetch.js";
import type { StoredLogo } from "./store.js";

/**
 * A brand's logo, fetched once from the owner's https URL through the guarded fetcher (public
 * addresses only, no redirects, a deadline and a size cap) and kept in our database, so no page
 * ever loads a third-party image. Raster images only: PNG, JPEG and WebP, recognised by their
 * own first bytes, and the answer's Content-Type must name the same type. SVG is refused: it is
 * a document that can carry script and external references, and a logo needs none of that.
 */
export const LOGO_TYPES = ["image/png", "image/jpeg", "image/webp"] as const;

/** The logo could not be taken; `message` says why, in words for the owner. */
export class LogoRefused extends Error {
  override name = "LogoRefused";
}

/** The image type its first bytes announce, or null. */
export function sniffImageType(bytes: Uint8Array): (typeof LOGO_TYPES)[number] | null {
  const starts = (sig: number[], at = 0) => sig.every((b, i) => bytes[at + i] === b);
  if (starts([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "image/png";
  if (starts([0xff, 0xd8, 0xff])) return "image/jpeg";
  if (starts([0x52, 0x49, 0x46, 0x46]) && starts([0x57, 0x45, 0x42, 0x50], 8)) return "image/webp";
  return null;
}

export async function fetchLogo(safeFetch: SafeFetch, url: string, maxBytes: number): Promise<StoredLogo> {
  if (!url.startsWith("https://")) throw new LogoRefused("logoUri must be an https URL.");
  let res: Response;
  try {
    res = await safeFetch.withLimits({ maxBytes })(url, { headers: { accept: LOGO_TYPES.join(", ") } });
  } catch (err) {
    if (err instanceof OutboundRefused) throw new LogoRefused(`The logo at logoUri could not be fetched: ${err.message}.`);
    throw new LogoRefused("The logo at logoUri could not be fetched: the connection failed.");
  }
  if (res.status !== 200) throw new LogoRefused(`The logo at logoUri answered HTTP ${res.status}, not 200 (redirects are not followed).`);
  const bytes = Buffer.from(await res.arrayBuffer());
  const declared = (res.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  const type = sniffImageType(bytes);
  if (!type) {
    const svg = declared === "image/svg+xml" ? " SVG is not accepted: it can carry script." : "";
    throw new LogoRefused(`The logo must be a PNG, JPEG or WebP image; logoUri answered ${declared || "no Content-Type"} whose bytes are none of them.${svg}`);
  }
  if (declared !== type) throw new LogoRefused(`logoUri answered Content-Type ${declared || "(none)"} for a ${type} image: the two must agree.`);
  return { type, bytes, hash: createHash("sha256").update(bytes).digest("hex") };
}
