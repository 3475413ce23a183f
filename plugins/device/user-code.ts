/**
 * RFC 8628 §6.1 user codes: 8 characters from better-auth's 32-letter alphabet, which has no
 * 0/O and no 1/I, so a code read off a screen cannot be mistyped between look-alikes. That is
 * 40 bits of entropy; the verification routes are rate limited per IP (plugins/device).
 *
 * Codes are stored bare (`WDJBMJHT`) and shown grouped (`WDJB-MJHT`). What a person types is
 * normalised before lookup: case folded, dashes and spaces dropped. better-auth's own lookup
 * does the same, so both spellings reach the same record.
 */
export const USER_CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
export const USER_CODE_LENGTH = 8;

const BARE = new RegExp(`^[${USER_CODE_ALPHABET}]{${USER_CODE_LENGTH}}$`);

/** `wdjb mjht`, `WDJB-MJHT` -> `WDJBMJHT`; anything that cannot be a code -> null. */
export function normalizeUserCode(input: string | null | undefined): string | null {
  if (typeof input !== "string" || input.length > 64) return null;
  const bare = input.replace(/[\s-]/g, "").toUpperCase();
  return BARE.test(bare) ? bare : null;
}

/** `WDJBMJHT` -> `WDJB-MJHT`, the form a person reads and types. */
export function formatUserCode(code: string): string {
  const bare = normalizeUserCode(code) ?? code;
  return bare.length === USER_CODE_LENGTH ? `${bare.slice(0, 4)}-${bare.slice(4)}` : bare;
}
