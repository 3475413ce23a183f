import { basicCredentialsOf } from "../../lib/auth-request.js";

/**
 * Every client a token request names, wherever oauth-provider might take it from: each
 * non-empty form `client_id` (it drops empty ones), the client id of HTTP Basic credentials
 * (RFC 6749 §2.3.1: form-encoded inside base64), and the issuer and subject of a client
 * assertion (RFC 7523 §3; read unverified, only to know which client it claims to be).
 * Deliberately more lenient than the readers it stands for: naming a client is enough.
 */
export function namedClientIds(form: URLSearchParams, authorization: string | null): Set<string> {
  const ids = new Set<string>();
  const add = (value: unknown) => {
    if (typeof value === "string" && value.length > 0 && value.length <= 255) ids.add(value);
  };
  for (const value of form.getAll("client_id")) add(value);
  const basic = basicCredentialsOf(authorization, true);
  if (basic) {
    add(basic.rawId);
    add(new URLSearchParams(`v=${basic.rawId}`).get("v"));
  }
  for (const assertion of form.getAll("client_assertion")) {
    const claims = jwtClaims(assertion);
    add(claims?.iss);
    add(claims?.sub);
  }
  return ids;
}

function jwtClaims(jwt: string): Record<string, unknown> | null {
  const payload = jwt.split(".")[1];
  if (!payload) return null;
  try {
    const claims: unknown = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
    return claims && typeof claims === "object" ? (claims as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/**
 * RFC 6749 §3.2: request parameters MUST NOT be included more than once. RFC 8707 §2
 * allows `resource` to repeat. Returns the first repeated name, or null.
 */
export function repeatedParameter(form: URLSearchParams): string | null {
  const seen = new Set<string>();
  for (const name of form.keys()) {
    if (name === "resource") continue;
    if (seen.has(name)) return name;
    seen.add(name);
  }
  return null;
}
