/** JSON.parse for stored, user-authored JSON: null for empty or unparsable text. */
export function parseJsonOrNull(raw: string | null | undefined): unknown {
  if (!raw) return null;
  try {
    return JSON.parse(raw);
  } catch {
    return null;
  }
}
