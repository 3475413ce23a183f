import { Hono, type Context } from "hono";
import type { Auth } from "../../auth.config.js";
import { AUTH_VERSION, type MutualAuth } from "../../lib/mutual-auth.js";
import type { Limiter } from "../../lib/rate-limit.js";
import { limit, type RouteEnv } from "../middleware.js";

/**
 * /.well-known/auth (BRC-104): GET is convenience metadata for people and tools (who we are,
 * where to shake hands); POST takes the handshake messages of BRC-103 mutual authentication.
 */
export interface MutualAuthRouteDeps {
  auth: Auth;
  mutualAuth: MutualAuth;
  authUrl: string;
  issuanceEnabled: boolean;
  /** Handshakes per client address (each one holds a session in memory). */
  handshakeLimiter: Limiter | null;
}

type C = Context<RouteEnv<MutualAuthRouteDeps>>;

function metadata(c: C) {
  const { mutualAuth, authUrl, issuanceEnabled } = c.var.deps;
  return c.json(
    {
      identityKey: mutualAuth.identityKey,
      authVersion: AUTH_VERSION,
      handshakeEndpoint: `${authUrl}/.well-known/auth`,
      certificateIssuance: { enabled: issuanceEnabled, endpoint: `${authUrl}/api/certificates/signCertificate`, protocol: "BRC-52" },
    },
    200,
    { "cache-control": "public, max-age=300", "access-control-allow-origin": "*" },
  );
}

async function handshake(c: C) {
  await limit(c.var.deps.handshakeLimiter, c);
  return c.var.deps.mutualAuth.handshake(c);
}

/** Mounted at /.well-known/auth. */
export const mutualAuthRoutes = new Hono<RouteEnv<MutualAuthRouteDeps>>().get("/", metadata).post("/", handshake);
