import { isAPIError } from "better-auth/api";
import type { AnalyticsCounter } from "./counter.js";

/**
 * The client a token request names, for counting only (never to authorize): the form's
 * `client_id`, the Basic credentials' user part (RFC 6749 §2.3.1), or the `sub` of a
 * private_key_jwt assertion (RFC 7523 §3), read without checking it. A made-up client_id
 * is dropped when counts are written (./flush.ts keeps registered clients only).
 */
export function tokenRequestClient(body: Record<string, unknown>, authorization: string | null | undefined): string | null {
  if (typeof body.client_id === "string") return body.client_id;
  if (authorization && /^basic /i.test(authorization)) {
    try {
      const decoded = Buffer.from(authorization.slice(6).trim(), "base64").toString("utf8");
      const colon = decoded.indexOf(":");
      return colon > 0 ? decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, "%20")) : null;
    } catch {
      return null;
    }
  }
  if (typeof body.client_assertion === "string") {
    try {
      const payload = JSON.parse(Buffer.from(body.client_assertion.split(".")[1] ?? "", "base64url").toString("utf8")) as { sub?: unknown };
      return typeof payload.sub === "string" ? payload.sub : null;
    } catch {
      return null;
    }
  }
  return null;
}

/**
 * One token endpoint answer, counted for its client: a token issued by grant type, or a refusal
 * by its RFC 6749 `error`. Called from plugins/metrics' after-hook on /oauth2/token.
 */
export function countTokenAnswer(counter: AnalyticsCounter, body: Record<string, unknown>, authorization: string | null | undefined, returned: unknown, grantLabel: string) {
  const clientId = tokenRequestClient(body, authorization);
  if (!clientId) return;
  if (isAPIError(returned)) {
    const error = (returned.body as { error?: unknown } | undefined)?.error;
    counter.count(clientId, "refusal", typeof error === "string" && /^[a-z_]{1,64}$/.test(error) ? error : "other");
    return;
  }
  if (returned instanceof Response && !returned.ok) return;
  counter.count(clientId, "token", grantLabel);
}
