import { CompiledQuery, type Kysely } from "kysely";
import { asBool, asDate } from "../../lib/db.js";

/**
 * oauth-provider's clients and access tokens as the fast introspection (plugins/fast-lane)
 * reads them: each a statement built and compiled once, run with a fresh
 * parameter (SQLite's statement cache, lib/db.ts, then reuses the prepared statement). The
 * tables stay oauth-provider's: nothing here writes.
 */

/** A registered client, as much of it as client authentication looks at. */
export interface ClientCredentialRow {
  clientId: string;
  /** SHA-256 base64url of the secret (oauth-provider's `storeClientSecret: "hashed"`), or null. */
  clientSecret: string | null;
  disabled: boolean;
  tokenEndpointAuthMethod: string | null;
  clientDiscoveryId: string | null;
  subjectType: string | null;
}

/** An opaque access token row with the session and user it refers to (left joins). */
export interface AccessTokenRow {
  clientId: string;
  /** null when the column does not hold a list (the generic path then decides). */
  scopes: string[] | null;
  expiresAt: Date;
  createdAt: Date;
  revoked: boolean;
  /** RFC 8707 resources the token was issued for (any value; empty means none). */
  resources: unknown;
  confirmation: unknown;
  referenceId: string | null;
  sessionId: string | null;
  /** The referred session's row: its expiry, or null when the row is gone. */
  session: { expiresAt: Date } | null;
  /** The user's id when the user row exists. */
  userId: string | null;
}

/** A JSON column: parsed objects from PostgreSQL (jsonb), JSON text from SQLite. */
const json = (value: unknown): unknown => (typeof value === "string" ? JSON.parse(value) : (value ?? null));

export function oauthTokenStore(db: Kysely<any>) {
  const clientSql = db
    .selectFrom("oauthClient")
    .select(["clientId", "clientSecret", "disabled", "tokenEndpointAuthMethod", "clientDiscoveryId", "subjectType"])
    .where("clientId", "=", "")
    .compile().sql;
  const tokenSql = db
    .selectFrom("oauthAccessToken as t")
    .leftJoin("session as s", "s.id", "t.sessionId")
    .leftJoin("user as u", "u.id", "t.userId")
    .select([
      "t.clientId",
      "t.scopes",
      "t.expiresAt",
      "t.createdAt",
      "t.revoked",
      "t.resources",
      "t.confirmation",
      "t.referenceId",
      "t.sessionId",
      "s.id as sessionRowId",
      "s.expiresAt as sessionExpiresAt",
      "u.id as userRowId",
    ])
    .where("t.token", "=", "")
    .compile().sql;

  return {
    async findClient(clientId: string): Promise<ClientCredentialRow | null> {
      const { rows } = await db.executeQuery<Record<string, unknown>>(CompiledQuery.raw(clientSql, [clientId]));
      const row = rows[0];
      if (!row) return null;
      return {
        clientId: String(row.clientId),
        clientSecret: (row.clientSecret as string | null) ?? null,
        disabled: asBool(row.disabled),
        tokenEndpointAuthMethod: (row.tokenEndpointAuthMethod as string | null) ?? null,
        clientDiscoveryId: (row.clientDiscoveryId as string | null) ?? null,
        subjectType: (row.subjectType as string | null) ?? null,
      };
    },
    /** The access token stored under `hash` (oauth-provider's `storeTokens: "hashed"`), or null. */
    async findAccessToken(hash: string): Promise<AccessTokenRow | null> {
      const { rows } = await db.executeQuery<Record<string, unknown>>(CompiledQuery.raw(tokenSql, [hash]));
      const row = rows[0];
      if (!row) return null;
      const scopes = json(row.scopes);
      return {
        clientId: String(row.clientId),
        scopes: Array.isArray(scopes) && scopes.every((s) => typeof s === "string") ? scopes : null,
        expiresAt: asDate(row.expiresAt),
        createdAt: asDate(row.createdAt),
        revoked: row.revoked != null,
        resources: json(row.resources),
        confirmation: json(row.confirmation),
        referenceId: (row.referenceId as string | null) ?? null,
        sessionId: (row.sessionId as string | null) ?? null,
        session: row.sessionRowId != null ? { expiresAt: asDate(row.sessionExpiresAt) } : null,
        userId: (row.userRowId as string | null) ?? null,
      };
    },
  };
}

export type OAuthTokenStore = ReturnType<typeof oauthTokenStore>;
