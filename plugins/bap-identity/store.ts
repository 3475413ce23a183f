import { randomUUID } from "node:crypto";
import { sql, type Kysely, type RawBuilder, type Selectable, type SelectQueryBuilder } from "kysely";
import type { DatabaseHandle } from "../../lib/db/connection.js";
import { gatheredRowsReader } from "../../lib/db/gather.js";
import { asJson, rowReader } from "../../lib/db/sqlite-values.js";
import { bapIdOfMemberKey } from "../../lib/bap.js";
import type { Database } from "../../lib/db/tables.js";
import { setUserPubkey } from "../core-store/users.js";

/** Suspended by a mailbox proof (./mailbox-proof.ts) and not confirmed since. */
export const isSuspended = (row: { suspendedAt?: unknown }) => row.suspendedAt !== null && row.suspendedAt !== undefined;

/**
 * Every read and write of the `bapIdentity` table through our own Kysely queries: the API
 * (routes/profile/shared.ts), the account and consent pages, token claims and backups all go through
 * here, with one row type, one order ("primary first, then as registered") and one rule for
 * which identity is primary. Changes take the caller's user id and touch only that user's rows,
 * so another person's identity reads as missing, never as someone else's.
 */

/** A registered BAP identity, decoded from either database. */
export interface BapIdentity {
  id: string;
  userId: string;
  bapId: string;
  rootAddress: string;
  currentAddress: string | null;
  memberPubkey: string | null;
  /** The published identity document, JSON text. */
  identity: string | null;
  isPrimary: boolean;
  name: string | null;
  counter: number | null;
  accountPubkey: string | null;
  /** Set by a mailbox proof (./mailbox-proof.ts) until the owner confirms the identity. */
  suspendedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

type Identities<O> = SelectQueryBuilder<Database, "bapIdentity", O>;

const IDENTITY_COLUMNS = ["id", "userId", "bapId", "rootAddress", "currentAddress", "memberPubkey", "identity", "isPrimary", "name", "counter", "accountPubkey", "suspendedAt", "createdAt", "updatedAt"] as const;
const toIdentity = rowReader("bapIdentity", IDENTITY_COLUMNS);

const identities = (db: Kysely<Database>) => db.selectFrom("bapIdentity").selectAll();
/** The one order: the primary identity first, then in the order they were registered. */
const primaryFirst = <O>(query: Identities<O>): Identities<O> => query.orderBy("isPrimary", "desc").orderBy("createdAt", "asc");
/** A suspended identity speaks for no one (tokens, consent, primary) until its owner confirms it. */
const inForce = <O>(query: Identities<O>): Identities<O> => query.where("suspendedAt", "is", null);

async function first(query: Identities<Selectable<Database["bapIdentity"]>>): Promise<BapIdentity | null> {
  const row = await query.executeTakeFirst();
  return row ? toIdentity(row) : null;
}

export function findIdentity(db: Kysely<Database>, bapId: string): Promise<BapIdentity | null> {
  return first(identities(db).where("bapId", "=", bapId));
}

/** The user's identity `bapId`, suspended or not; null when it is someone else's or missing. */
export function findOwnedIdentity(db: Kysely<Database>, userId: string, bapId: string): Promise<BapIdentity | null> {
  return first(identities(db).where("userId", "=", userId).where("bapId", "=", bapId));
}

/** The user's primary identity (the first registered when none is marked primary), suspended or not. */
export function findPrimaryIdentity(db: Kysely<Database>, userId: string): Promise<BapIdentity | null> {
  return first(primaryFirst(identities(db).where("userId", "=", userId)));
}

/** The user's identities, primary first; `inForceOnly` leaves suspended ones out. */
export async function listIdentities(db: Kysely<Database>, userId: string, { inForceOnly = false } = {}): Promise<BapIdentity[]> {
  const query = identities(db).where("userId", "=", userId);
  return (await primaryFirst(inForceOnly ? inForce(query) : query).execute()).map(toIdentity);
}

/** The identities a member key controls, primary first (public lookup during login). */
export async function listIdentitiesOfMemberKey(db: Kysely<Database>, memberPubkey: string): Promise<BapIdentity[]> {
  return (await primaryFirst(identities(db).where("memberPubkey", "=", memberPubkey)).execute()).map(toIdentity);
}

/** How many of the user's identities are in force (each is a way to sign in with a key). */
export async function countIdentitiesInForce(db: Kysely<Database>, userId: string): Promise<number> {
  const row = await inForce(db.selectFrom("bapIdentity").select((eb) => eb.fn.countAll().as("n")).where("userId", "=", userId)).executeTakeFirst();
  return Number(row?.n ?? 0);
}

/**
 * The profile a token speaks for: the one selected at authorization (the consent and token
 * `referenceId`) when it belongs to the user and is in force, else the user's primary one in force.
 */
export async function findSelectedIdentity(db: Kysely<Database>, userId: string, referenceId?: string | null): Promise<BapIdentity | null> {
  const mine = inForce(identities(db).where("userId", "=", userId));
  const selected = referenceId ? await first(mine.where("bapId", "=", referenceId)) : null;
  return selected ?? first(primaryFirst(mine));
}

/**
 * {@link findSelectedIdentity} as one statement built once: a prepared read on either database
 * (DatabaseHandle.readRowsNow, queryPrepared). The ID token's and userinfo's profile claims
 * read it on every grant and every userinfo call. It reads the user's identities in force (a
 * handful) and picks one here, by the same rule as the query above: without an ORDER BY,
 * SQLite runs no sorter, which cost more than the read itself (about 14 µs against 3 for a user
 * with none).
 */
export function selectedIdentityReader(database: Pick<DatabaseHandle, "db" | "readRowsNow" | "queryPrepared">) {
  const text = identitiesInForceSql(database.db);
  // Gathered on PostgreSQL: the claims of the grants answered in one turn are one statement.
  const read = gatheredRowsReader(database, "idp_identities_in_force", text, ["text"]);
  /** `inForce`: the user's identities in force when a read before this one carried them (identitiesInForceJson); read here otherwise. */
  return async (userId: string, referenceId?: string | null, inForce?: readonly BapIdentity[]): Promise<BapIdentity | null> => {
    const rows = inForce ?? (await read([userId])).map((row) => toIdentity(row as Selectable<Database["bapIdentity"]>));
    return (referenceId ? rows.find((row) => row.bapId === referenceId) : undefined) ?? primaryOf(rows);
  };
}

/**
 * The identities in force of the user that the column `userId` names (say `"t.userId"`), as a
 * JSON array column of a larger read: the refresh grant's and userinfo's reads carry them, so
 * the profile claims need no statement of their own (one round trip fewer per answer on
 * PostgreSQL). The same query as identitiesInForceSql, correlated with the outer read instead
 * of a parameter (it looks the user's rows up by the `userId` index), read back by
 * identitiesOfJson.
 */
export function identitiesInForceJson(db: Kysely<Database>, dialect: "sqlite" | "postgres", userId: string): RawBuilder<unknown> {
  const rows = inForce(identities(db).where("userId", "=", sql.ref<string>(userId)));
  if (dialect === "postgres") return sql`(select coalesce(json_agg(${sql.id("agg")}), '[]') from ${rows} as ${sql.id("agg")})`;
  const fields = sql.join(IDENTITY_COLUMNS.map((column) => sql`${sql.lit(column)}, ${sql.ref(`agg.${column}`)}`));
  return sql`(select coalesce(json_group_array(json_object(${fields})), '[]') from ${rows} as ${sql.id("agg")})`;
}

/** The identities of an identitiesInForceJson column (parsed JSON from PostgreSQL, its text from SQLite). */
export function identitiesOfJson(value: unknown): BapIdentity[] {
  const rows = asJson(value);
  if (!Array.isArray(rows)) throw new Error("identities: not a JSON array");
  return rows.map((row) => toIdentity(row as Selectable<Database["bapIdentity"]>));
}

/**
 * Set on a user object passed to the profile claims (auth.config.ts, profileClaims) when the
 * read that found the user carried its identities in force (the fast refresh grant's, the fast
 * userinfo's);
 * a symbol, so that no user field from the database can stand in for it.
 */
export const IDENTITIES_IN_FORCE: unique symbol = Symbol("identitiesInForce");

/** The statement selectedIdentityReader runs: a user's identities in force (`$1`: the user's id). */
export function identitiesInForceSql(db: Kysely<Database>): string {
  return inForce(identities(db).where("userId", "=", "")).compile().sql;
}

/** {@link primaryFirst}'s first row: the primary identity, else the first registered. */
function primaryOf(rows: readonly BapIdentity[]): BapIdentity | null {
  let best: BapIdentity | null = null;
  for (const row of rows) {
    if (!best || (row.isPrimary && !best.isPrimary) || (row.isPrimary === best.isPrimary && row.createdAt.getTime() < best.createdAt.getTime())) best = row;
  }
  return best;
}

/**
 * The one rule for the primary identity: exactly one of the user's identities is marked, and
 * the account's `pubkey` is its member key (key sign-in and tokens read it from there).
 */
async function markPrimary(db: Kysely<Database>, userId: string, id: string): Promise<void> {
  await db.updateTable("bapIdentity").set({ isPrimary: false }).where("userId", "=", userId).execute();
  await db.updateTable("bapIdentity").set({ isPrimary: true }).where("id", "=", id).where("userId", "=", userId).execute();
}
const setAccountPubkey = setUserPubkey;

/**
 * Makes one of the user's identities in force the primary one (the `bap_id` an app sees by
 * default). Its member key was proven when it was registered (POST /api/user/bap-ids), so no
 * new signature is needed to choose among identities the account already holds; a suspended one
 * is confirmed first. False when the user has no such identity in force.
 */
export async function makePrimary(db: Kysely<Database>, userId: string, bapId: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const row = await first(inForce(identities(trx).where("userId", "=", userId).where("bapId", "=", bapId)));
    if (!row) return false;
    await markPrimary(trx, userId, row.id);
    if (row.memberPubkey) await setAccountPubkey(trx, userId, row.memberPubkey);
    return true;
  });
}

/**
 * After identities change state: the oldest-primary identity in force is the primary one, and
 * the account's `pubkey` is its member key (registration does the same), or null when no
 * identity is in force: a suspended identity speaks for no one in tokens.
 */
async function syncPrimary(db: Kysely<Database>, userId: string) {
  const head = await first(primaryFirst(inForce(identities(db).where("userId", "=", userId))));
  if (head && !head.isPrimary) await markPrimary(db, userId, head.id);
  await setAccountPubkey(db, userId, head?.memberPubkey ?? null);
}

/** What a registration (POST /api/user/bap-ids) writes; the member key is the one that signed it. */
export interface IdentityRegistration {
  bapId: string;
  memberPubkey: string;
  rootAddress: string;
  name?: string;
  counter?: number;
  isPrimary?: boolean;
  accountPubkey?: string;
  currentAddress?: string;
  /** The identity document, JSON text. */
  identity?: string;
}

/**
 * Registers an identity to the user, or updates the user's own registration of it. The user's
 * first identity becomes primary, as does one registered with `isPrimary: true`; `false` unmarks
 * it. "taken" (and no change) when another account holds the identity.
 */
export async function registerIdentity(db: Kysely<Database>, userId: string, input: IdentityRegistration, now = new Date()): Promise<"created" | "updated" | "taken"> {
  return db.transaction().execute(async (trx) => {
    const existing = await findIdentity(trx, input.bapId);
    if (existing && existing.userId !== userId) return "taken" as const;
    const count = await trx.selectFrom("bapIdentity").select((eb) => eb.fn.countAll().as("n")).where("userId", "=", userId).executeTakeFirst();
    const primary = input.isPrimary === true || (Number(count?.n ?? 0) === 0 && !existing);
    const fields = {
      memberPubkey: input.memberPubkey,
      ...(input.currentAddress ? { currentAddress: input.currentAddress } : {}),
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.counter !== undefined ? { counter: input.counter } : {}),
      ...(input.accountPubkey ? { accountPubkey: input.accountPubkey } : {}),
      ...(input.identity !== undefined ? { identity: input.identity } : {}),
      updatedAt: now,
    };
    let id = existing?.id;
    if (id) {
      await trx.updateTable("bapIdentity").set({ ...fields, ...(input.isPrimary === false ? { isPrimary: false } : {}) }).where("id", "=", id).execute();
    } else {
      id = randomUUID();
      await trx
        .insertInto("bapIdentity")
        .values({ id, userId, bapId: input.bapId, rootAddress: input.rootAddress, currentAddress: input.rootAddress, isPrimary: false, createdAt: now, ...fields })
        .execute();
    }
    if (primary) {
      await markPrimary(trx, userId, id);
      await setAccountPubkey(trx, userId, input.memberPubkey);
    }
    return existing ? ("updated" as const) : ("created" as const);
  });
}

/**
 * A rotation (BAP: the identity's signing key moves on, `incrementPath`): the registered
 * member key of the user's own identity becomes `to`. Only while the key that signed the
 * request is still the one in force (`from`: the registered member key, or the root key, which
 * derives the bapId and so always speaks for it); false when the identity is not the user's,
 * is suspended, or `from` lost the race to another rotation.
 */
export async function rotateMemberKey(db: Kysely<Database>, userId: string, rotation: { bapId: string; from: string; to: string; currentAddress?: string }, now = new Date()): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const row = await findOwnedIdentity(trx, userId, rotation.bapId);
    if (!row || isSuspended(row)) return false;
    if (row.memberPubkey !== rotation.from && bapIdOfMemberKey(rotation.from) !== rotation.bapId) return false;
    let update = trx.updateTable("bapIdentity").set({ memberPubkey: rotation.to, ...(rotation.currentAddress ? { currentAddress: rotation.currentAddress } : {}), updatedAt: now }).where("id", "=", row.id);
    update = row.memberPubkey === null ? update.where("memberPubkey", "is", null) : update.where("memberPubkey", "=", row.memberPubkey);
    if (!Number((await update.executeTakeFirst()).numUpdatedRows)) return false;
    if (row.isPrimary) await setAccountPubkey(trx, userId, rotation.to);
    return true;
  });
}

/** A publication was recorded: the identity document on chain is now this one. */
export async function setPublishedIdentity(db: Kysely<Database>, bapId: string, identity: string, now = new Date()): Promise<void> {
  await db.updateTable("bapIdentity").set({ identity, updatedAt: now }).where("bapId", "=", bapId).execute();
}

/**
 * A mailbox proof on an account whose address was unverified: every identity on it was added
 * by whoever held the account then, so each is suspended (refused at key sign-in, left out of
 * tokens) until the owner confirms it. Answers how many were suspended.
 */
export async function suspendBapIdentities(db: Kysely<Database>, userId: string, at = new Date()): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const result = await trx.updateTable("bapIdentity").set({ suspendedAt: at }).where("userId", "=", userId).where("suspendedAt", "is", null).executeTakeFirst();
    const suspended = Number(result.numUpdatedRows);
    if (suspended) await syncPrimary(trx, userId);
    return suspended;
  });
}

/**
 * Lifts a suspension: the signed-in owner vouches for an identity that was on the account
 * before they proved the mailbox. False when the user has no such identity; true (and no
 * change) when it was not suspended.
 */
export async function confirmBapIdentity(db: Kysely<Database>, userId: string, bapId: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const row = await findOwnedIdentity(trx, userId, bapId);
    if (!row) return false;
    if (!isSuspended(row)) return true;
    await trx.updateTable("bapIdentity").set({ suspendedAt: null, updatedAt: new Date() }).where("id", "=", row.id).execute();
    await syncPrimary(trx, userId);
    return true;
  });
}

export type RemoveResult = "removed" | "not-found" | "last-sign-in-method";

/**
 * Removes one of the user's identities (its unpublished draft goes with it; recorded
 * publications stay, they describe a transaction on chain). An identity in force goes only when
 * `mayRemoveInForce` agrees (plugins/sign-in-methods: it must not be the last way to sign in);
 * a suspended identity is no way in, so removing it is always allowed.
 */
export async function removeBapIdentity(db: Kysely<Database>, userId: string, bapId: string, mayRemoveInForce: () => Promise<boolean>): Promise<RemoveResult> {
  const row = await findOwnedIdentity(db, userId, bapId);
  if (!row) return "not-found";
  if (!isSuspended(row) && !(await mayRemoveInForce())) return "last-sign-in-method";
  return db.transaction().execute(async (trx) => {
    const deleted = await trx.deleteFrom("bapIdentity").where("id", "=", row.id).where("userId", "=", userId).executeTakeFirst();
    if (!Number(deleted.numDeletedRows)) return "not-found" as const;
    await trx.deleteFrom("bapProfileDraft").where("bapId", "=", bapId).where("userId", "=", userId).execute();
    // Were it the primary one, the oldest identity in force takes its place.
    await syncPrimary(trx, userId);
    return "removed" as const;
  });
}
