import { gatheredRowReader } from "../../lib/db/gather.js";
import { thenOrNow, type Awaitable, type DatabaseHandle } from "../../lib/db/connection.js";
import { asBool, asDate, asJson } from "../../lib/db/sqlite-values.js";

/**
 * oauth-provider's clients and access tokens as the fast introspection (plugins/fast-lane)
 * reads them: each a statement built and compiled once, run with a fresh
 * parameter (SQLite's statement cache, lib/db/dialects.ts, then reuses the prepared statement). The
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

const json = asJson;

/** A row of CLIENT_CREDENTIAL_COLUMNS as the client it describes. */
export function clientCredentialsOf(row: Record<string, unknown>): ClientCredentialRow {
  return {
    clientId: String(row.clientRowId),
    clientSecret: (row.clientSecret as string | null) ?? null,
    disabled: asBool(row.disabled),
    tokenEndpointAuthMethod: (row.tokenEndpointAuthMethod as string | null) ?? null,
    clientDiscoveryId: (row.clientDiscoveryId as string | null) ?? null,
    subjectType: (row.subjectType as string | null) ?? null,
  };
}

function toToken(row: Record<string, unknown>): AccessTokenRow {
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
}

/** The client columns client authentication reads, as the fast lanes' statements select them (`c`: oauthClient). */
export const CLIENT_CREDENTIAL_COLUMNS = ["c.clientId as clientRowId", "c.clientSecret", "c.disabled", "c.tokenEndpointAuthMethod", "c.clientDiscoveryId", "c.subjectType"] as const;

/** The user columns the token claims read (`u`: user), as the fast lanes' statements select them. */
export const USER_CLAIM_COLUMNS = ["u.id as userRowId", "u.name as userName", "u.email as userEmail", "u.emailVerified as userEmailVerified", "u.image as userImage", "u.pubkey as userPubkey"] as const;

/*
 * Why the fast lanes join a token by its hash alone and compare its client on the row, not in
 * the join: with `t.clientId = c.clientId` in the join, PostgreSQL may read the token through the
 * client's index (every token of that client) instead of the hash's unique index. It planned so
 * on a table without statistics yet (a new deployment, or one growing faster than autovacuum
 * analyses it), and a prepared statement keeps its generic plan: each refresh then read every
 * token its client had ever held (about a thousand rows each after a few seconds of the bench).
 * By hash alone, the unique index is the only index there is to use.
 * tests/ops/token-plans.test.ts asks each database for the plan.
 */

/**
 * The client and the access token with its session and user: one statement (one round trip on
 * PostgreSQL) for the usual introspection; parameters: the token's hash, the client id. The
 * token is joined by its hash alone, and whether it is the client's own is checked on the row
 * (see above).
 */
export function clientAndTokenSql(db: DatabaseHandle["db"]): string {
  return db
    .selectFrom("oauthClient as c")
    .leftJoin("oauthAccessToken as t", (join) => join.on("t.token", "=", ""))
    .leftJoin("session as s", "s.id", "t.sessionId")
    .leftJoin("user as u", "u.id", "t.userId")
    .select([
      ...CLIENT_CREDENTIAL_COLUMNS,
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
    .where("c.clientId", "=", "")
    .compile().sql;
}

export function oauthTokenStore(database: Pick<DatabaseHandle, "db" | "readRowNow" | "queryPrepared">) {
  // At once on SQLite; on PostgreSQL, the reads of one turn of the event loop as one statement (lib/db/gather.ts).
  const readBoth = gatheredRowReader(database, "idp_introspect_client_token", clientAndTokenSql(database.db), ["text", "text"]);

  return {
    /**
     * The client `clientId` and the access token stored under `hash` when that client holds it
     * (null token: none, or another client's); null when there is no such client. At once on SQLite.
     */
    findClientAndToken(clientId: string, hash: string): Awaitable<{ client: ClientCredentialRow; token: AccessTokenRow | null } | null> {
      return thenOrNow(readBoth([hash, clientId]), (row) => (row ? { client: clientCredentialsOf(row), token: row.clientId != null && row.clientId === row.clientRowId ? toToken(row) : null } : null));
    },
  };
}

export type OAuthTokenStore = ReturnType<typeof oauthTokenStore>;
