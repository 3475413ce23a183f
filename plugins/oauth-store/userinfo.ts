import { preparedRowReader, type DatabaseHandle } from "../../lib/db/connection.js";
import { asBool, asDate, asJson } from "../../lib/db/sqlite-values.js";
import { USER_CLAIM_COLUMNS } from "./introspection.js";
import { IDENTITIES_IN_FORCE, identitiesInForceJson, identitiesOfJson, type BapIdentity } from "../bap-identity/store.js";

/**
 * oauth-provider's access tokens as the fast userinfo (plugins/fast-lane/userinfo.ts) reads them:
 * the token by its hash with its client, its session, its user and the user's BAP identities in
 * force (the profile claims), in one statement built once (a prepared read on either database).
 * Nothing here writes.
 */

/** An opaque access token row as userinfo checks it, with what it refers to (left joins). */
export interface UserInfoTokenRow {
  clientId: string | null;
  /** null when the column does not hold a list of strings. */
  scopes: string[] | null;
  expiresAt: Date;
  revoked: boolean;
  resources: unknown;
  confirmation: unknown;
  referenceId: string | null;
  sessionId: string | null;
  requestedUserInfoClaims: unknown;
  /** The token's client, when the row exists. */
  client: { disabled: boolean; subjectType: string | null; discovered: boolean } | null;
  /** The referred session's expiry, or null when the row is gone. */
  session: { expiresAt: Date } | null;
  /** The token's user, when the row exists: as much of it as userinfo's claims read. */
  user: {
    id: string;
    name: string | null;
    email: string | null;
    emailVerified: boolean;
    image: string | null;
    pubkey: string | null;
    /** Read with the token for the profile claims (auth.config.ts); decoded when read, so a token without `profile` never decodes them. */
    readonly [IDENTITIES_IN_FORCE]: readonly BapIdentity[];
  } | null;
}

function toRow(row: Record<string, unknown>): UserInfoTokenRow {
  const scopes = asJson(row.scopes);
  const identities = row.identities;
  return {
    clientId: (row.clientId as string | null) ?? null,
    scopes: Array.isArray(scopes) && scopes.every((s) => typeof s === "string") ? scopes : null,
    expiresAt: asDate(row.expiresAt),
    revoked: row.revoked != null,
    resources: asJson(row.resources),
    confirmation: asJson(row.confirmation),
    referenceId: (row.referenceId as string | null) ?? null,
    sessionId: (row.sessionId as string | null) ?? null,
    requestedUserInfoClaims: asJson(row.requestedUserInfoClaims),
    client: row.clientRowId != null ? { disabled: asBool(row.clientDisabled), subjectType: (row.clientSubjectType as string | null) ?? null, discovered: row.clientDiscoveryId != null } : null,
    session: row.sessionRowId != null ? { expiresAt: asDate(row.sessionExpiresAt) } : null,
    user:
      row.userRowId != null
        ? {
            id: String(row.userRowId),
            name: (row.userName as string | null) ?? null,
            email: (row.userEmail as string | null) ?? null,
            emailVerified: asBool(row.userEmailVerified),
            image: (row.userImage as string | null) ?? null,
            pubkey: (row.userPubkey as string | null) ?? null,
            get [IDENTITIES_IN_FORCE]() {
              return identitiesOfJson(identities);
            },
          }
        : null,
  };
}

/** The read of an access token with its client, session, user and identities, by the token's hash ($1 or ?). */
export function userInfoTokenSql(db: DatabaseHandle["db"], dialect: DatabaseHandle["type"]): string {
  return db
    .selectFrom("oauthAccessToken as t")
    .leftJoin("oauthClient as c", "c.clientId", "t.clientId")
    .leftJoin("session as s", "s.id", "t.sessionId")
    .leftJoin("user as u", "u.id", "t.userId")
    .select([
      "t.clientId",
      "t.scopes",
      "t.expiresAt",
      "t.revoked",
      "t.resources",
      "t.confirmation",
      "t.referenceId",
      "t.sessionId",
      "t.requestedUserInfoClaims",
      "c.clientId as clientRowId",
      "c.disabled as clientDisabled",
      "c.subjectType as clientSubjectType",
      "c.clientDiscoveryId",
      "s.id as sessionRowId",
      "s.expiresAt as sessionExpiresAt",
      ...USER_CLAIM_COLUMNS,
      identitiesInForceJson(db, dialect, "t.userId").as("identities"),
    ])
    .where("t.token", "=", "")
    .compile().sql;
}

export function userInfoTokenStore(database: Pick<DatabaseHandle, "db" | "type" | "readRowNow" | "queryPrepared">) {
  const read = preparedRowReader(database, "idp_userinfo_token", userInfoTokenSql(database.db, database.type));
  return {
    /** The access token stored under `hash` (oauth-provider's `storeTokens: "hashed"`), or null. */
    async findToken(hash: string): Promise<UserInfoTokenRow | null> {
      const row = await read([hash]);
      return row ? toRow(row) : null;
    },
  };
}

export type UserInfoTokenStore = ReturnType<typeof userInfoTokenStore>;
