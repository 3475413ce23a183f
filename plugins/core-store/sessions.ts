import type { BetterAuthDBSchema, DBFieldAttribute } from "better-auth";
import type { Kysely } from "kysely";
import { preparedRowReader, thenOrNow, type Awaitable, type DatabaseHandle } from "../../lib/db/connection.js";
import { asDate, rowReader } from "../../lib/db/sqlite-values.js";
import type { Database } from "../../lib/db/tables.js";
import { keep } from "../../lib/kept.js";

/**
 * better-auth's `session` table as our code reads and changes it outside a better-auth request
 * (its one owner here; adapter.ts is the same inside one). better-auth creates and deletes
 * sessions itself: revocations still go through its internal adapter, so a session kept in
 * secondary storage goes too.
 */

export interface SessionRow {
  id: string;
  createdAt: Date;
  updatedAt: Date;
  expiresAt: Date;
  ipAddress: string | null;
  userAgent: string | null;
}

/** A person's sessions not yet expired, most recently updated first (the account page). */
export async function listActiveSessions(db: Kysely<Database>, userId: string): Promise<SessionRow[]> {
  const rows = await db
    .selectFrom("session")
    .select(["id", "createdAt", "updatedAt", "expiresAt", "ipAddress", "userAgent"])
    .where("userId", "=", userId)
    .orderBy("updatedAt", "desc")
    .execute();
  const now = Date.now();
  return rows
    .map((r) => ({ id: r.id, createdAt: asDate(r.createdAt), updatedAt: asDate(r.updatedAt), expiresAt: asDate(r.expiresAt), ipAddress: r.ipAddress ?? null, userAgent: r.userAgent ?? null }))
    .filter((s) => s.expiresAt.getTime() > now);
}

const toStoredSession = rowReader("session", ["id", "createdAt", "expiresAt", "ipAddress", "userAgent"]);

export type StoredSession = ReturnType<typeof toStoredSession>;

/** Every stored session of a person, expired or not, oldest first (the admin CLI). */
export async function listStoredSessions(db: Kysely<Database>, userId: string): Promise<StoredSession[]> {
  const rows = await db.selectFrom("session").select(["id", "createdAt", "expiresAt", "ipAddress", "userAgent"]).where("userId", "=", userId).orderBy("createdAt", "asc").execute();
  return rows.map(toStoredSession);
}

/** The token of the session `sessionId` when it is `userId`'s, else null. */
export async function findSessionToken(db: Kysely<Database>, userId: string, sessionId: string): Promise<string | null> {
  const row = await db.selectFrom("session").select("token").where("id", "=", sessionId).where("userId", "=", userId).executeTakeFirst();
  return row ? row.token : null;
}

/** Sets the tier every session of a person carries (plugins/subscriptions keeps it in step with the user's). */
export async function setSessionsTier(db: Kysely<Database>, userId: string, tier: string): Promise<void> {
  await db.updateTable("session").set({ subscriptionTier: tier }).where("userId", "=", userId).execute();
}

/** A session and its user as better-auth's adapter gives them (`internalAdapter.findSession`). */
export interface SessionWithUser {
  session: Record<string, unknown> & { expiresAt: Date };
  user: Record<string, unknown>;
}

/**
 * The session stored under a token, with its user, in one statement (one round trip): what
 * better-auth's `findSession` reads from the database, each field of its schema (`tables`:
 * the core fields and every plugin's) decoded as its adapter decodes it (dates, booleans, ids as
 * strings). For get-session's fast lane, on a deployment that keeps sessions in the
 * database only. Null when better-auth would not decode the same way (a field with its own
 * output transform, or JSON): the lane then uses findSession itself.
 */
export function sessionWithUserReader(database: SessionDatabase, tables: Pick<BetterAuthDBSchema, "session" | "user">) {
  const statement = sessionWithUserStatement(database, tables);
  if (!statement) return null;
  const { read, session, user } = statement;
  return (sessionToken: string): Awaitable<SessionWithUser | null> =>
    thenOrNow(read([sessionToken]), (row) => (row ? { session: decoded(row, "s", session) as SessionWithUser["session"], user: decoded(row, "u", user) } : null));
}

/** A session and its user read by {@link sessionJsonReader}, not yet written out. */
export interface SessionJson {
  /** When the session expires (ms since the epoch). */
  expiresAt: number;
  /** A field's value in the output (decoded as findSession decodes it); undefined for a field left out. */
  value(table: "session" | "user", key: string): unknown;
  /**
   * `{"session":{...},"user":{...}}`: the bytes JSON.stringify writes for the objects
   * better-auth's output shaping makes of the rows (parseSessionOutput, parseUserOutput: the
   * fields `hidden` left out), with the session's fields in `replace` set as a spread would set
   * them (a field already there keeps its place, another is added last).
   */
  json(replace?: Record<string, unknown>): string;
}

/**
 * get-session's answer straight from {@link sessionWithUserReader}'s row: no intermediate
 * objects, no clone and filter of each (better-auth's output shaping), no Date kept. The same
 * bytes (tests/ops/fast-lane.test.ts compares them with the app's answer). Null as
 * sessionWithUserReader's.
 */
export function sessionJsonReader(database: SessionDatabase, tables: Pick<BetterAuthDBSchema, "session" | "user">, hidden: { session: ReadonlySet<string>; user: ReadonlySet<string> }) {
  const statement = sessionWithUserStatement(database, tables);
  if (!statement) return null;
  const { read } = statement;
  const shown = (columns: readonly Column[], prefix: string, leftOut: ReadonlySet<string>) =>
    // Each column one literal (a spread's copies took a hidden class each in V8, and the
    // per-request loops over them went megamorphic).
    columns.flatMap((c, i) => (leftOut.has(c.key) ? [] : [{ key: c.key, column: c.column, type: c.type, id: c.id, alias: `${prefix}${i}`, first: `${JSON.stringify(c.key)}:`, next: `,${JSON.stringify(c.key)}:` }]));
  const session = shown(statement.session, "s", hidden.session);
  const user = shown(statement.user, "u", hidden.user);
  const expiresAt = statement.session.findIndex((c) => c.key === "expiresAt");
  if (expiresAt < 0) return null;
  const byKey = { session: new Map(session.map((c) => [c.key, c])), user: new Map(user.map((c) => [c.key, c])) };
  const written = (row: Record<string, unknown>, columns: typeof session, replace?: Record<string, unknown>) => {
    let out = "{";
    for (const c of columns) {
      const text = replace !== undefined && c.key in replace ? JSON.stringify(replace[c.key]) : jsonOf(c, row[c.alias]);
      if (text !== undefined) out += (out.length > 1 ? c.next : c.first) + text;
    }
    for (const key in replace) {
      const text = byKey.session.has(key) ? undefined : JSON.stringify(replace[key]);
      if (text !== undefined) out += `${out.length > 1 ? "," : ""}${JSON.stringify(key)}:${text}`;
    }
    return `${out}}`;
  };
  const shownColumns = [...session, ...user];
  /**
   * The last answer written for each token, with the row and replacements it was written from.
   * A session is read afresh on every request; only when that read gives back the very values
   * of the last one (a page polling get-session) are its bytes not written again.
   */
  const last = new Map<string, { row: Record<string, unknown>; replace: Record<string, unknown> | undefined; json: string }>();
  const sameValues = (a: Record<string, unknown>, b: Record<string, unknown>) => {
    for (const c of shownColumns) if (!Object.is(a[c.alias], b[c.alias])) return false;
    return true;
  };
  const found = (sessionToken: string, row: Record<string, unknown>): SessionJson => {
    const expires = row[`s${expiresAt}`];
    return {
      expiresAt: typeof expires === "string" ? Date.parse(expires) : (expires as Date | number).valueOf(),
      value(table, key) {
        const c = byKey[table].get(key);
        return c ? valueOf(c, row[c.alias]) : undefined;
      },
      json(replace) {
        const kept = last.get(sessionToken);
        // The very row (kept under an unchanged stamp) needs no comparing.
        if (kept && sameReplacement(kept.replace, replace) && (kept.row === row || sameValues(kept.row, row))) return kept.json;
        const json = `{"session":${written(row, session, replace)},"user":${written(row, user)}}`;
        keep(last, sessionToken, { row, replace, json }, LAST_ANSWERS);
        return json;
      },
    };
  };
  /**
   * On SQLite, the last row read for each token with the connection's change stamp taken just
   * before the read: while the stamp is the same, nothing in the database has changed since
   * (no commit by any connection or process, no write by this one), so that row is what the
   * read would give again. Any write anywhere moves the stamp, and the next request reads.
   */
  const lastRead = new Map<string, { stamp: { version: number; changes: number }; row: Record<string, unknown> }>();
  const { changeStamp } = database;
  return (sessionToken: string): Awaitable<SessionJson | null> => {
    // Taken before the read: a commit between the two then moves the stamp the row is kept
    // under, and the next request reads again.
    const stamp = changeStamp ? changeStamp() : null;
    if (stamp) {
      const kept = lastRead.get(sessionToken);
      if (kept && kept.stamp.version === stamp.version && kept.stamp.changes === stamp.changes) return found(sessionToken, kept.row);
    }
    return thenOrNow(read([sessionToken]), (row) => {
      if (!row) return null;
      if (stamp) keep(lastRead, sessionToken, { stamp, row }, LAST_ANSWERS);
      return found(sessionToken, row);
    });
  };
}

/** The most tokens sessionJsonReader keeps a last answer for (the oldest is dropped first). */
const LAST_ANSWERS = 1000;

/** Whether two replacements (a key or two of plain values) set the same fields to the same values. */
function sameReplacement(a: Record<string, unknown> | undefined, b: Record<string, unknown> | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const key of keys) if (!Object.hasOwn(b, key) || !Object.is(a[key], b[key])) return false;
  return true;
}

type SessionDatabase = Pick<DatabaseHandle, "db" | "readRowNow" | "queryPrepared" | "type" | "changeStamp">;

/** The statement behind both readers, with the columns it selects (as `s0..`, `u0..`). */
function sessionWithUserStatement(database: SessionDatabase, tables: Pick<BetterAuthDBSchema, "session" | "user">) {
  const statement = sessionWithUserSql(database.type, tables);
  return statement && { read: preparedRowReader(database, "idp_session_with_user", statement.sql), session: statement.session, user: statement.user };
}

/** The read of a session and its user by the session's token, with the columns it selects; null when a field is decoded otherwise. */
export function sessionWithUserSql(type: DatabaseHandle["type"], tables: Pick<BetterAuthDBSchema, "session" | "user">) {
  const session = columnsOf(tables.session.fields);
  const user = columnsOf(tables.user.fields);
  if (!session || !user) return null;
  const q = (name: string) => `"${name.replaceAll('"', '""')}"`;
  const select = [...session.map((c, i) => `s.${q(c.column)} as s${i}`), ...user.map((c, i) => `u.${q(c.column)} as u${i}`)].join(", ");
  const token = type === "postgres" ? "$1" : "?";
  const sql = `select ${select} from ${q(tables.session.modelName)} as s join ${q(tables.user.modelName)} as u on u.${q(user.find((c) => c.key === "id")!.column)} = s.${q(session.find((c) => c.key === "userId")!.column)} where s.${q(session.find((c) => c.key === "token")!.column)} = ${token}`;
  return { sql, session, user };
}

interface Column {
  key: string;
  column: string;
  type: DBFieldAttribute["type"];
  id: boolean;
}

/**
 * The table's fields with their column names, `id` last (better-auth's adapter gives it last,
 * so its answers' JSON has it last); null when one is decoded otherwise.
 */
function columnsOf(fields: Record<string, DBFieldAttribute>): Column[] | null {
  const out: Column[] = [];
  for (const [key, field] of Object.entries(fields)) {
    if (key === "id") continue;
    // An output transform, or JSON (better-auth revives dates inside it): findSession decodes those.
    if (field.transform?.output || field.type === "json" || field.type === "string[]" || field.type === "number[]") return null;
    out.push({ key, column: field.fieldName || key, type: field.type, id: field.references?.field === "id" });
  }
  out.push({ key: "id", column: "id", type: "string", id: true });
  return out;
}

/** As @better-auth/core's adapter factory decodes a value (transformOutput) for SQLite (no dates or booleans); PostgreSQL's driver gives both already. */
function valueOf(c: Column, value: unknown): unknown {
  if (c.id) return value == null ? value : String(value);
  if (typeof value === "string" && c.type === "date") return new Date(value);
  if (typeof value === "number" && c.type === "boolean") return value === 1;
  return value;
}

/** JSON.stringify(valueOf(c, value)), without the Date where the stored text is already its JSON. */
function jsonOf(c: Column, value: unknown): string | undefined {
  if (typeof value === "string" && c.type === "date" && !c.id) return dateJson(value);
  if (typeof value === "number" && c.type === "boolean" && !c.id) return value === 1 ? "true" : "false";
  return JSON.stringify(valueOf(c, value));
}

const ISO = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):[0-5]\d:[0-5]\d\.\d{3}Z$/;
const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * JSON.stringify(new Date(text)): a date as better-auth stores it on SQLite (toISOString's
 * form, a real day and time) is its own JSON text, and `new Date` and `toISOString` cost more
 * than the rest of a session's answer; any other text takes the Date (which normalizes or
 * refuses it: `null`).
 */
export function dateJson(text: string): string {
  const m = ISO.exec(text);
  if (m) {
    const year = Number(m[1]);
    const month = Number(m[2]);
    const day = Number(m[3]);
    const leap = month === 2 && year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
    if (month >= 1 && month <= 12 && day >= 1 && day <= DAYS[month - 1]! + (leap ? 1 : 0) && Number(m[4]) < 24) return `"${text}"`;
  }
  return JSON.stringify(new Date(text));
}

function decoded(row: Record<string, unknown>, prefix: string, columns: readonly Column[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  columns.forEach((c, i) => {
    out[c.key] = valueOf(c, row[`${prefix}${i}`]);
  });
  return out;
}
