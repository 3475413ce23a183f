import { CompiledQuery, type Kysely } from "kysely";
import { asBool, asDate, asJson } from "../../lib/db/sqlite-values.js";
import type { Database } from "../../lib/db/tables.js";
import type { DatabaseHandle } from "../../lib/db/connection.js";
import { gatheredRowReader } from "../../lib/db/gather.js";
import { postgresRotator } from "./refresh-postgres.js";
import { IDENTITIES_IN_FORCE, identitiesInForceJson, identitiesOfJson, type BapIdentity } from "../bap-identity/store.js";
import { CLIENT_CREDENTIAL_COLUMNS, clientCredentialsOf, USER_CLAIM_COLUMNS, type ClientCredentialRow } from "./introspection.js";

/**
 * oauth-provider's clients and refresh tokens as the fast refresh grant (plugins/fast-lane/refresh.ts)
 * reads and rotates them: one prepared read of the client, the presented refresh token and its
 * user, and one short transaction that rotates the token and stores the new pair. The rows
 * written are the ones oauth-provider's `createRefreshToken` and `createOpaqueAccessToken` write
 * for the same grant (tests/oauth/fast-refresh.test.ts reads both back and compares them).
 */

/** A registered client, as much of it as the refresh grant's client checks look at. */
export interface RefreshClientRow extends ClientCredentialRow {
  /** The scopes the client may ask for (null: any), or "invalid" when the column holds no list. */
  scopes: string[] | null | "invalid";
  grantTypes: string[] | null | "invalid";
  dpopBoundAccessTokens: boolean;
  /** Client metadata (JSON object), parsed; null when absent or unreadable. */
  metadata: Record<string, unknown> | null;
  memberPubkey: string | null;
  enableEndSession: boolean;
  backchannelLogoutUri: string | null;
}

/** A refresh token row, held by the client that presented it. */
export interface RefreshTokenRow {
  id: string;
  clientId: string;
  sessionId: string | null;
  userId: string;
  referenceId: string | null;
  authorizationCodeId: string | null;
  resources: unknown;
  requestedUserInfoClaims: unknown;
  confirmation: unknown;
  /** null when the column does not hold a list of strings. */
  scopes: string[] | null;
  expiresAt: Date;
  revoked: boolean;
  authTime: Date | null;
}

/** The token's user, as the ID token's claims read it; null when the user row is gone. */
export interface RefreshUserRow {
  id: string;
  name: string;
  email: string;
  emailVerified: boolean;
  image: string | null;
  pubkey: string | null;
  createdAt: Date;
  updatedAt: Date;
  /**
   * The user's BAP identities in force, read with the grant: the ID token's profile claims use
   * them (auth.config.ts). Decoded when read, so a grant without `profile` never decodes them.
   */
  readonly [IDENTITIES_IN_FORCE]: readonly BapIdentity[];
}

export interface RefreshGrant {
  client: RefreshClientRow;
  /** null: no refresh token with that hash held by this client. */
  token: RefreshTokenRow | null;
  user: RefreshUserRow | null;
}

/** The rows one rotation writes (all times in whole seconds, as oauth-provider writes them). */
export interface Rotation {
  /** The presented token's row id, revoked and marked rotated at `issuedAt`. */
  previousId: string;
  issuedAt: Date;
  refresh: { id: string; tokenHash: string; expiresAt: Date };
  access: { id: string; tokenHash: string; expiresAt: Date };
  clientId: string;
  sessionId: string | null;
  userId: string;
  referenceId: string | null;
  authorizationCodeId: string | null;
  authTime: Date | null;
  scopes: string[];
  /** The userinfo claims the grant asked for (empty: none, stored as null). */
  requestedUserInfoClaims: string[];
}

/** A JSON column's value (text that is not JSON throws: the read fails and the generic path answers). */
const json = asJson;

function stringList(value: unknown): string[] | null | "invalid" {
  const list = json(value);
  if (list === null) return null;
  return Array.isArray(list) && list.every((s) => typeof s === "string") ? list : "invalid";
}

function toClient(row: Record<string, unknown>): RefreshClientRow {
  const metadata = json(row.metadata);
  const credentials = clientCredentialsOf(row);
  // Written out, not spread: a spread's copy then grown field by field took a new hidden class
  // on every read (V8 migrated it each time), and every later read of the client missed.
  return {
    clientId: credentials.clientId,
    clientSecret: credentials.clientSecret,
    disabled: credentials.disabled,
    tokenEndpointAuthMethod: credentials.tokenEndpointAuthMethod,
    clientDiscoveryId: credentials.clientDiscoveryId,
    subjectType: credentials.subjectType,
    scopes: stringList(row.clientScopes),
    grantTypes: stringList(row.grantTypes),
    dpopBoundAccessTokens: asBool(row.dpopBoundAccessTokens),
    metadata: metadata && typeof metadata === "object" && !Array.isArray(metadata) ? (metadata as Record<string, unknown>) : null,
    memberPubkey: (row.memberPubkey as string | null) ?? null,
    enableEndSession: asBool(row.enableEndSession),
    backchannelLogoutUri: (row.backchannelLogoutUri as string | null) ?? null,
  };
}

function toToken(row: Record<string, unknown>): RefreshTokenRow {
  const scopes = stringList(row.scopes);
  return {
    id: String(row.tokenRowId),
    clientId: String(row.clientId),
    sessionId: (row.sessionId as string | null) ?? null,
    userId: String(row.userId),
    referenceId: (row.referenceId as string | null) ?? null,
    authorizationCodeId: (row.authorizationCodeId as string | null) ?? null,
    resources: json(row.resources),
    requestedUserInfoClaims: json(row.requestedUserInfoClaims),
    confirmation: json(row.confirmation),
    scopes: Array.isArray(scopes) ? scopes : null,
    expiresAt: asDate(row.expiresAt),
    revoked: row.revoked != null,
    authTime: row.authTime != null ? asDate(row.authTime) : null,
  };
}

function toUser(row: Record<string, unknown>): RefreshUserRow {
  const identities = row.identities;
  return {
    id: String(row.userRowId),
    name: String(row.userName ?? ""),
    email: String(row.userEmail ?? ""),
    emailVerified: asBool(row.userEmailVerified),
    image: (row.userImage as string | null) ?? null,
    pubkey: (row.userPubkey as string | null) ?? null,
    createdAt: asDate(row.userCreatedAt),
    updatedAt: asDate(row.userUpdatedAt),
    get [IDENTITIES_IN_FORCE]() {
      return identitiesOfJson(identities);
    },
  };
}

/**
 * The client and the refresh token with its user and the user's BAP identities in force (the
 * ID token's profile claims): one statement (one round trip on PostgreSQL); parameters: the
 * token's hash, the client id. The token is joined by its hash alone and its client compared
 * on the row (why: above oauthTokenStore in ./introspection.ts).
 */
export function refreshGrantSql(db: Kysely<Database>, dialect: DatabaseHandle["type"]): string {
  return db
    .selectFrom("oauthClient as c")
    .leftJoin("oauthRefreshToken as t", (join) => join.on("t.token", "=", ""))
    .leftJoin("user as u", "u.id", "t.userId")
    .select([
      ...CLIENT_CREDENTIAL_COLUMNS,
      "c.scopes as clientScopes",
      "c.grantTypes",
      "c.dpopBoundAccessTokens",
      "c.metadata",
      "c.memberPubkey",
      "c.enableEndSession",
      "c.backchannelLogoutUri",
      "t.id as tokenRowId",
      "t.clientId",
      "t.sessionId",
      "t.userId",
      "t.referenceId",
      "t.authorizationCodeId",
      "t.resources",
      "t.requestedUserInfoClaims",
      "t.confirmation",
      "t.scopes",
      "t.expiresAt",
      "t.revoked",
      "t.authTime",
      ...USER_CLAIM_COLUMNS,
      "u.createdAt as userCreatedAt",
      "u.updatedAt as userUpdatedAt",
      identitiesInForceJson(db, dialect, "t.userId").as("identities"),
    ])
    .where("c.clientId", "=", "")
    .compile().sql;
}

export function refreshGrantStore(database: DatabaseHandle) {
  const db: Kysely<Database> = database.db;
  // Compiled once; SQLite's statement cache then reuses the prepared statement.
  const grantSql = refreshGrantSql(db, database.type);

  // The rotation's statements, compiled once with placeholders in the order the values are bound.
  const revokeSql = db.updateTable("oauthRefreshToken").set({ revoked: new Date(0), rotatedAt: new Date(0) }).where("id", "=", "").where("revoked", "is", null).compile().sql;
  const sharedColumns = { clientId: "", sessionId: "", userId: "", referenceId: "", authorizationCodeId: "", requestedUserInfoClaims: "", scopes: "", createdAt: new Date(0) };
  const insertRefreshSql = db
    .insertInto("oauthRefreshToken")
    .values({ ...sharedColumns, id: "", token: "", authTime: new Date(0), expiresAt: new Date(0) })
    .compile().sql;
  const insertAccessSql = db
    .insertInto("oauthAccessToken")
    .values({ ...sharedColumns, id: "", token: "", refreshId: "", expiresAt: new Date(0) })
    .compile().sql;

  // PostgreSQL: the reads of one turn of the event loop as one statement (lib/db/gather.ts).
  const rotatePostgres = database.type === "postgres" ? postgresRotator(database) : null;
  const readGrant = gatheredRowReader(database, "idp_refresh_grant", grantSql, ["text", "text"]);

  return {
    /** The client `clientId` with the refresh token stored under `tokenHash` if that client holds it; null when there is no such client. */
    async findGrant(clientId: string, tokenHash: string): Promise<RefreshGrant | null> {
      const row = await readGrant([tokenHash, clientId]);
      if (!row) return null;
      const token = row.tokenRowId != null && row.clientId === row.clientRowId ? toToken(row) : null;
      return { client: toClient(row), token, user: token && row.userRowId != null ? toUser(row) : null };
    },

    /**
     * Rotates the presented refresh token and stores the new refresh and access tokens, in one
     * transaction. The presented row is revoked only if it still is not (a compare and set), so
     * of two concurrent uses one rotates and the other writes nothing: false, and the caller
     * leaves the request to oauth-provider, which finds the token rotated (reuse).
     */
    async rotate(rotation: Rotation): Promise<boolean> {
      const { issuedAt } = rotation;
      const scopes = JSON.stringify(rotation.scopes);
      const claims = rotation.requestedUserInfoClaims.length ? JSON.stringify(rotation.requestedUserInfoClaims) : null;
      if (rotatePostgres) {
        // One statement, atomic by itself, gathered with the other rotations of this turn of
        // the event loop: one round trip and one commit for all (./refresh-postgres.ts).
        const { refresh, access } = rotation;
        return rotatePostgres([issuedAt, rotation.previousId, refresh.id, refresh.tokenHash, rotation.clientId, rotation.sessionId, rotation.userId, rotation.referenceId, rotation.authorizationCodeId, claims, scopes, rotation.authTime, refresh.expiresAt, access.id, access.tokenHash, access.expiresAt]);
      }
      const shared = [rotation.clientId, rotation.sessionId, rotation.userId, rotation.referenceId, rotation.authorizationCodeId, claims, scopes, issuedAt];
      // SQLite: the three statements in one transaction with the other rotations of this turn
      // of the event loop (group commit), when the connection is free.
      const now = await database.transactSoon?.((run) => {
        if (run(revokeSql, [issuedAt, issuedAt, rotation.previousId]) !== 1) return false;
        run(insertRefreshSql, [...shared, rotation.refresh.id, rotation.refresh.tokenHash, rotation.authTime, rotation.refresh.expiresAt]);
        run(insertAccessSql, [...shared, rotation.access.id, rotation.access.tokenHash, rotation.refresh.id, rotation.access.expiresAt]);
        return true;
      });
      if (now) return now.value;
      return database.atomically(
        async () => {
          const revoked = await db.executeQuery(CompiledQuery.raw(revokeSql, [issuedAt, issuedAt, rotation.previousId]));
          if (Number(revoked.numAffectedRows) !== 1) return false;
          await db.executeQuery(CompiledQuery.raw(insertRefreshSql, [...shared, rotation.refresh.id, rotation.refresh.tokenHash, rotation.authTime, rotation.refresh.expiresAt]));
          await db.executeQuery(CompiledQuery.raw(insertAccessSql, [...shared, rotation.access.id, rotation.access.tokenHash, rotation.refresh.id, rotation.access.expiresAt]));
          return true;
        },
        (rotated) => rotated,
      );
    },
  };
}

export type RefreshGrantStore = ReturnType<typeof refreshGrantStore>;
