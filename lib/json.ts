import { isAPIError } from "better-auth/api";

/** JSON.parse for stored, user-authored JSON: null for empty or unparsable text. */
export function parseJsonOrNull(raw: string | null | undefined): unknown {
  if (!raw) return null;
  try {
    return JSON.parse(raw);
  } catch {
    return null;
  }
}

/** A plain JSON object as an endpoint returned it to a hook: not an array, an APIError or a Response. */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return Boolean(value) && typeof value === "object" && !Array.isArray(value) && !isAPIError(value) && !(value instanceof Response);
}
