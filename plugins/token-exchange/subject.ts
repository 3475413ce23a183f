import type { OAuthProviderApi } from "@better-auth/oauth-provider";
import { APIError, isAPIError } from "better-auth/api";
import type { Kysely } from "kysely";
import type { Database } from "../../lib/db/tables.js";
import { findActiveExchange } from "../oauth-store/exchanges.js";

/** RFC 8693 §3: the one token type this server takes and issues. */
export const ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token";

/** RFC 8693 §4.1: who acts, and who acted before them (`act.act`). */
export interface Actor {
  sub: string;
  act?: Actor;
}

/** An access token of ours presented at the exchange, as its introspection reads (active only). */
export interface PresentedToken {
  sub: string;
  clientId: string;
  scopes: string[];
  exp: number;
  /** RFC 8707 resources in `aud` (the userinfo endpoint left out). */
  resources: string[];
  act?: Actor;
  /** RFC 8693 §4.4. */
  mayAct?: unknown;
  sid?: string;
  bapId?: string;
  /** The app whose grant it came from: its own client, or the delegated token's recorded app. */
  grantClientId: string;
  /** RFC 9396: what the person granted in detail (`authorization_details`), if anything. */
  authorizationDetails?: unknown;
}

export function refuse(error: "invalid_request" | "invalid_scope" | "invalid_target" | "unauthorized_client" | "invalid_authorization_details", description: string): never {
  throw new APIError("BAD_REQUEST", { error, error_description: description });
}

function isActor(value: unknown, depth = 0): value is Actor {
  if (depth > 16 || typeof value !== "object" || value === null) return false;
  const { sub, act } = value as Record<string, unknown>;
  return typeof sub === "string" && (act === undefined || isActor(act, depth + 1));
}

/** How many actors a token names: 0 without `act`, 1 with `act`, 2 with `act.act` ... */
export function actorDepth(act: Actor | undefined): number {
  let depth = 0;
  for (let a = act; a; a = a.act) depth += 1;
  return depth;
}

/** oauth-provider's introspection of an access token when it is active, else null (unknown and malformed tokens too). */
export async function activePayload(provider: OAuthProviderApi, token: string): Promise<Record<string, unknown> | null> {
  try {
    const payload = (await provider.validateAccessToken(token)) as Record<string, unknown>;
    return payload.active === true ? payload : null;
  } catch (err) {
    if (isAPIError(err)) return null;
    throw err;
  }
}

/**
 * An access token we issued that is in force now, or null: unknown, malformed, expired, revoked,
 * from a disabled client, without a person (client credentials), bound to a key (DPoP), or a
 * delegated token whose record is gone (its grant was revoked). oauth-provider decides the token's own validity
 * (signature or stored hash, expiry, revocation, session); the exchange record is ours.
 */
export async function presentedToken(provider: OAuthProviderApi, db: Kysely<Database>, token: string, userInfoUrl: string): Promise<PresentedToken | null> {
  const payload = await activePayload(provider, token);
  if (!payload) return null;
  const { sub, client_id: clientId, exp, act } = payload;
  if (typeof sub !== "string" || typeof clientId !== "string" || typeof exp !== "number") return null;
  // A client credentials JWT names its client as `sub`: it speaks for no person.
  if (sub === clientId) return null;
  if (act !== undefined && !isActor(act)) return null;
  // RFC 9449: a token bound to a key (cnf) is only good with a proof of that key; exchanged for
  // an unbound one it would lose the binding, so whoever took it could launder it here.
  if (payload.cnf !== undefined) return null;
  let grantClientId = clientId;
  if (act !== undefined) {
    const record = typeof payload.jti === "string" ? await findActiveExchange(db, payload.jti) : null;
    if (!record) return null;
    grantClientId = record.grantClientId;
  }
  const aud = payload.aud;
  const audiences = (Array.isArray(aud) ? aud : aud === undefined ? [] : [aud]).filter((a): a is string => typeof a === "string");
  return {
    sub,
    clientId,
    scopes: typeof payload.scope === "string" ? payload.scope.split(" ").filter(Boolean) : [],
    exp,
    resources: audiences.filter((a) => a !== userInfoUrl),
    act,
    mayAct: payload.may_act,
    sid: typeof payload.sid === "string" ? payload.sid : undefined,
    bapId: typeof payload.bap_id === "string" ? payload.bap_id : undefined,
    grantClientId,
    authorizationDetails: payload.authorization_details,
  };
}
