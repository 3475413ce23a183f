/**
 * Rules for what we store and later show or hand to other parties as a person's or an
 * application's name or link: client names and URIs (consent page, registration), user names
 * and pictures (account page, `name` and `picture` claims).
 */

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * Unicode bidirectional controls (UAX #9: embeddings, overrides, isolates, marks): inside a
 * name they reorder the text around it, so "Bank\u202Eppa.live" reads as another name
 * (CVE-2021-42574, "Trojan Source"). No legitimate name needs one.
 */
const BIDI_CONTROLS = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/;
/** C0 controls and DEL: a name is one line of text. */
const CONTROLS = /[\u0000-\u001F\u007F]/;
const UNSHOWABLE = new RegExp(`${BIDI_CONTROLS.source}|${CONTROLS.source}`, "g");

/** Why a display name cannot be stored, or null when it can. */
export function displayNameProblem(name: string, maxLength: number): string | null {
  if (name.length > maxLength && Array.from(name).length > maxLength) return `is longer than ${maxLength} characters`;
  if (BIDI_CONTROLS.test(name)) return "must not contain bidirectional control characters";
  if (CONTROLS.test(name)) return "must not contain control characters";
  return null;
}

/**
 * A display name from a source we cannot refuse (a social provider's profile, an
 * administrator): the same rule applied by removing what breaks it, cut at `maxLength`
 * code points.
 */
export function cleanDisplayName(name: string, maxLength: number): string {
  const clean = name.replace(UNSHOWABLE, "");
  const points = Array.from(clean);
  return points.length > maxLength ? points.slice(0, maxLength).join("") : clean;
}

/**
 * Whether `value` is a link we may store and show: an absolute https URL without credentials
 * (`javascript:`, `data:` and the rest never reach a page or a relying party), or, when
 * `loopbackHttp` is set (while developing), http on a loopback host, as for redirect URIs
 * (RFC 8252 §7.3).
 */
export function isPublicHttpsUrl(value: string, options: { loopbackHttp?: boolean; maxLength?: number } = {}): boolean {
  if (value.length > (options.maxLength ?? 2048)) return false;
  const url = URL.parse(value);
  if (!url || url.username || url.password) return false;
  if (url.protocol === "https:") return true;
  return Boolean(options.loopbackHttp) && isLoopbackHttp(url);
}

/** An http URL on a loopback host (RFC 8252 §7.3). */
export function isLoopbackHttp(url: URL): boolean {
  return url.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname);
}
