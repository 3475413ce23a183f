/**
 * WCAG 2.2 contrast (Success Criterion 1.4.3, level AA; the formulas of its definitions of
 * "relative luminance" and "contrast ratio"). The accent colour is used on the pages' white card
 * as link text and as the background of the primary button, whose text is white: both pairs are
 * the accent against #ffffff, so that is the one ratio to check.
 */

/** AA for normal-size text: 4.5:1. */
export const AA_NORMAL_TEXT = 4.5;
/** The card the accent sits on, and the button text it sits under. */
export const ACCENT_COUNTERPART = "#ffffff";

/** `#rgb` or `#rrggbb` (any case) as `#rrggbb` in lower case; null for anything else. */
export function normalizeHexColor(value: string): string | null {
  const short = /^#([0-9a-f])([0-9a-f])([0-9a-f])$/i.exec(value);
  if (short) return `#${short[1]}${short[1]}${short[2]}${short[2]}${short[3]}${short[3]}`.toLowerCase();
  return /^#[0-9a-f]{6}$/i.test(value) ? value.toLowerCase() : null;
}

/** Relative luminance of a `#rrggbb` colour (WCAG 2.2, sRGB). */
export function relativeLuminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
}

/** (L1 + 0.05) / (L2 + 0.05), the lighter colour's luminance on top: from 1 to 21. */
export function contrastRatio(a: string, b: string): number {
  const [hi, lo] = [relativeLuminance(a), relativeLuminance(b)].sort((x, y) => y - x);
  return (hi! + 0.05) / (lo! + 0.05);
}

/** Why `accent` cannot be used (in words, with its ratio), or null when it meets AA. */
export function accentContrastProblem(accent: string): string | null {
  const ratio = contrastRatio(accent, ACCENT_COUNTERPART);
  if (ratio >= AA_NORMAL_TEXT) return null;
  const shown = Math.floor(ratio * 100) / 100;
  return `accentColor ${accent} has a contrast ratio of ${shown}:1 against white (${ACCENT_COUNTERPART}), the page background it is used on as link colour and the button text it is used under; WCAG 2.2 AA (1.4.3) needs at least ${AA_NORMAL_TEXT}:1. Choose a darker colour.`;
}
