import type { Redis } from "ioredis";
import { keep } from "../../lib/kept.js";
import { secondaryStorageKey } from "../../lib/redis.js";

/**
 * better-auth's copy of a session in Redis (its secondary storage, lib/redis.ts
 * redisSecondaryStorage), read for the fast get-session as its internal adapter's `findSession`
 * reads it, in fewer round trips:
 *   - the copy, `{session, user}` as JSON under the session token;
 *   - the user's revocation mark (`revoked-sessions-before-<userId>`, milliseconds): a copy
 *     created before it is revoked, whether or not its key was deleted yet.
 * findSession reads the two one after the other; here, once a token's user is known (a token
 * belongs to one user for ever), both are read in one MGET, which the lane starts beside the
 * limiter's script (lib/fast-lane.ts `early`): both are on the connection at once, one wait
 * for the whole request. Both are read on every request: nothing about a session is
 * kept, so a revocation or a sign-out is seen at once on every instance.
 */

/**
 * better-auth's key for the time before which a user's sessions are revoked (internal-adapter
 * `revokedBeforeKey`). An internal name: tests/ops/fast-lane.test.ts revokes through better-auth
 * and fails when the mark is no longer under this key.
 */
export const revokedBeforeKey = (userId: string): string => `revoked-sessions-before-${userId}`;

/** better-auth's reviver (@better-auth/core utils/json `reviveDate`): these strings become Dates. */
const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z$/;

/** A session as findSession returns it, still as JSON values: dates as the strings JSON.stringify makes of them. */
export interface StoredSession {
  session: Record<string, unknown> & { userId: string; createdAt: string | null; expiresAt: string | null };
  user: Record<string, unknown>;
}

/** What JSON.stringify writes for `new Date(value)`: its ISO string, null for an invalid date. */
function dateJson(value: unknown): string | null {
  const date = new Date(value as string);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

/**
 * `value` with every string better-auth's reviver turns into a Date replaced by that Date's JSON
 * (the same string, unless it was written without milliseconds, say), in place: the parsed
 * copy then serialises to the bytes of findSession's answer.
 */
function revived(value: Record<string, unknown> | unknown[]): void {
  for (const key of Object.keys(value)) {
    const v = (value as Record<string, unknown>)[key];
    if (typeof v === "string") {
      if (v.length >= 20 && ISO_8601.test(v)) {
        const json = dateJson(v);
        if (json !== null) (value as Record<string, unknown>)[key] = json;
      }
    } else if (v !== null && typeof v === "object") revived(v as Record<string, unknown>);
  }
}

/** findSession's dates (`new Date(...)` of each, even a missing one: it answers null then). */
function withDates(row: Record<string, unknown>, fields: readonly string[]): void {
  for (const field of fields) row[field] = dateJson(row[field]);
}

/**
 * The stored copy `text` as findSession shapes it before its output filter, or null where it
 * would find nothing (not JSON, no session or user in it).
 */
function storedSessionOf(text: string): StoredSession | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  if (parsed === null || typeof parsed !== "object") return null;
  const { session, user } = parsed as Record<string, unknown>;
  if (session === null || typeof session !== "object" || user === null || typeof user !== "object") return null;
  revived(parsed as Record<string, unknown>);
  withDates(session as Record<string, unknown>, ["expiresAt", "createdAt", "updatedAt"]);
  withDates(user as Record<string, unknown>, ["createdAt", "updatedAt"]);
  if (typeof (session as Record<string, unknown>).userId !== "string") return null;
  return { session: session as StoredSession["session"], user: user as Record<string, unknown> };
}

/** Whether `stored` was created before its user's revocation mark (findSession's isRevokedSession). */
function revokedBy(stored: StoredSession, mark: string | null): boolean {
  return new Date(stored.session.createdAt as string).getTime() < Number(mark);
}

/** The token's copy and, when its user was known, the user's revocation mark (undefined: not read). */
export interface StoredRead {
  text: string | null;
  userId?: string;
  mark?: string | null;
}

/** Tokens whose user is remembered, at most (the oldest is forgotten first). */
const REMEMBERED = 10_000;

/**
 * The reads of a session's copy in Redis: `start(token)` sends them (the copy, and the
 * revocation mark of the token's user when it is known), `finish(read)` parses the copy and reads
 * the mark when it was not sent with it. Only which user a token belongs to is remembered.
 */
export function storedSessionReads(redis: Redis) {
  const owners = new Map<string, string>();
  return {
    start(token: string): Promise<StoredRead> {
      const userId = owners.get(token);
      if (userId === undefined) return redis.get(secondaryStorageKey(token)).then((text) => ({ text }));
      return redis.mget(secondaryStorageKey(token), secondaryStorageKey(revokedBeforeKey(userId))).then(([text, mark]) => ({ text: text ?? null, userId, mark: mark ?? null }));
    },
    /**
     * The session of `token` as findSession finds it in Redis, or null where the app should
     * answer: no copy (findSession then reads the database), a copy it cannot read, a revoked one.
     */
    async finish(token: string, read: StoredRead): Promise<StoredSession | null> {
      if (read.text === null) {
        owners.delete(token);
        return null;
      }
      const stored = storedSessionOf(read.text);
      if (!stored) return null;
      const userId = stored.session.userId;
      // The mark was read beside the copy when its user was known (and is the copy's user).
      const mark = read.userId === userId ? (read.mark ?? null) : await redis.get(secondaryStorageKey(revokedBeforeKey(userId)));
      if (read.userId !== userId) {
        keep(owners, token, userId, REMEMBERED);
      }
      return revokedBy(stored, mark) ? null : stored;
    },
  };
}
