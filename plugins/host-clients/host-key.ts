import { validatePublicClientJwks } from "@better-auth/oauth-provider/internal";
import { parseJsonOrNull } from "../../lib/json.js";
import type { KeySet } from "../client-keys/key-set.js";

/**
 * An enrolled agent host as an OAuth client (RFC 7523 §2.2 private_key_jwt): the client's only
 * key is the host's enrolled public key, so no secret is ever made. Where the link lives: the
 * client's metadata (`oauthClient.metadata`) names the host, and the host's key, not the
 * client's stored `jwks`, is the authority (./index.ts copies it in before every assertion).
 */
export const HOST_CLIENT_METADATA_KEY = "agent_host_id";

/** The grants such a client is registered for: machine tokens and delegation (RFC 8693). */
export const HOST_CLIENT_GRANT_TYPES = ["client_credentials", "urn:ietf:params:oauth:grant-type:token-exchange"] as const;

/** The host a client stands for, from its metadata (an object or its JSON text); null for any other client. */
export function hostIdOfClient(metadata: unknown): string | null {
  const value = typeof metadata === "string" ? parseJsonOrNull(metadata) : metadata;
  const hostId = value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>)[HOST_CLIENT_METADATA_KEY] : null;
  return typeof hostId === "string" && hostId ? hostId : null;
}

/**
 * The host's enrolled key (agent-auth stores the JWK as JSON text) as a client key set,
 * checked as a registered `jwks` is; null when the host has no key (a revoked host's is
 * cleared) or one private_key_jwt cannot verify. An Ed25519 key signs as EdDSA (RFC 8037 §3.1).
 */
export function hostKeySet(publicKey: string | null | undefined): KeySet | null {
  const jwk = publicKey ? parseJsonOrNull(publicKey) : null;
  if (!jwk || typeof jwk !== "object" || Array.isArray(jwk)) return null;
  const key: Record<string, unknown> = { ...(jwk as Record<string, unknown>), use: "sig" };
  if (key.kty === "OKP" && key.crv === "Ed25519" && key.alg === undefined) key.alg = "EdDSA";
  const checked = validatePublicClientJwks({ keys: [key] });
  return checked.valid ? { keys: checked.jwks.keys as Record<string, unknown>[] } : null;
}
