import { getOAuthProviderApi } from "@better-auth/oauth-provider";
import type { BetterAuthPlugin } from "better-auth";
import { createAuthEndpoint } from "better-auth/api";
import * as v from "valibot";
import { jktOf } from "../../lib/dpop.js";
import { findAccessTokenReference } from "../oauth-store/adapter.js";

/** Who an active OAuth access token speaks for. */
export interface OAuthBearer {
  userId: string;
  clientId: string | null;
  /** The BAP identity selected at authorization (consent / token `referenceId`), if any. */
  referenceId: string | null;
  scopes: string[];
  /** The key the token is bound to (RFC 9449 `cnf.jkt`): the caller must prove it (lib/dpop.ts). */
  jkt: string | null;
}

const VerifyBody = v.object({ token: v.pipe(v.string(), v.minLength(1), v.maxLength(8192)) });

type EndpointContext = Parameters<typeof getOAuthProviderApi>[0];

/**
 * RFC 9068 §4: a resource server refuses a JWT access token whose `aud` does not name it. A JWT
 * access token is issued for one resource (RFC 8707, plugins/resource-policy) and is that
 * resource's: were our routes to take it, any resource server a person authorized could replay
 * the tokens it receives against the person's backup. Our own routes take an opaque access token
 * (a grant without `resource`: stored, for this server), and a JWT only where the caller serves
 * the audience it names (`audience`: userinfo for plugins/claims-policy).
 */
function isForAudience(token: string, payload: Record<string, unknown>, audience: string | undefined): boolean {
  if (token.split(".").length !== 3) return true;
  const aud = payload.aud;
  if (aud === undefined || aud === null) return true;
  return audience !== undefined && (Array.isArray(aud) ? aud.includes(audience) : aud === audience);
}

/**
 * The check behind `auth.api.verifyOAuthAccessToken` (below), for better-auth endpoints and
 * hooks too (plugins/claims-policy at userinfo): null when the token is not an active token
 * for a user, or is a JWT for another resource than `audience` (none: our REST routes).
 */
export async function verifyAccessToken(ctx: EndpointContext, token: string, audience?: string): Promise<OAuthBearer | null> {
  const provider = ctx.context.getPlugin("oauth-provider") as { options: Parameters<typeof getOAuthProviderApi>[1] } | null;
  if (!provider) return null;
  const api = getOAuthProviderApi(ctx, provider.options);
  let payload: Record<string, unknown>;
  try {
    payload = await api.requireActiveAccessToken(token);
  } catch {
    return null;
  }
  // A client_credentials token has no user: it cannot act for an identity.
  if (typeof payload.sub !== "string" || !payload.sub) return null;
  if (!isForAudience(token, payload, audience)) return null;
  // Opaque tokens keep the selected identity on their stored row; JWT access tokens carry it as `bap_id`.
  const row = await findAccessTokenReference(ctx.context.adapter, await api.hashToken(token, "access_token"));
  const referenceId = row?.referenceId ?? (typeof payload.bap_id === "string" ? payload.bap_id : null);
  const clientId = typeof payload.client_id === "string" ? payload.client_id : null;
  const scopes = typeof payload.scope === "string" ? payload.scope.split(" ").filter(Boolean) : [];
  return { userId: payload.sub, clientId, referenceId: referenceId || null, scopes, jkt: jktOf(payload) };
}

/**
 * The OAuth access-token check for our own resource routes (/api/backup ...), done by
 * oauth-provider itself (`requireActiveAccessToken`: signature or stored hash, expiry,
 * revocation, client still enabled, session still alive). Server-only: callable as
 * `auth.api.verifyOAuthAccessToken`, never routed over HTTP. Spec, Authentication rule 1:
 * an access token is not a session; routes decide whether they take one.
 */
export function oauthBearer() {
  return {
    id: "oauth-bearer",
    endpoints: {
      verifyOAuthAccessToken: createAuthEndpoint.serverOnly({ method: "POST", body: VerifyBody }, async (ctx): Promise<OAuthBearer | null> =>
        verifyAccessToken(ctx as unknown as EndpointContext, ctx.body.token),
      ),
    },
  } satisfies BetterAuthPlugin;
}
