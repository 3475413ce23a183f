import type { AuthContext } from "better-auth";
import type { Redis } from "ioredis";
import { parseSessionOutput, parseUserOutput } from "better-auth/db";
import { sessionLimitKey } from "../../lib/auth-limits.js";
import { verifiedCookieToken } from "../../lib/auth-request.js";
import type { LaneAnswer, LaneRequest, LaneRoute } from "../../lib/fast-lane.js";
import { thenOrNow, type Awaitable } from "../../lib/db/connection.js";
import { keep } from "../../lib/kept.js";
import { currentTierOf, withCurrentTier } from "../subscriptions/index.js";
import { sessionJsonReader, type SessionJson } from "../core-store/sessions.js";
import { storedSessionReads, type StoredRead, type StoredSession } from "./stored-sessions.js";

/**
 * GET /get-session with a session cookie, in the fast lane (lib/fast-lane.ts): the session is
 * read as better-auth's own internal adapter reads it (Redis when the deployment has it: its copy
 * and the user's revocation mark as `findSession` reads them, in one command beside the
 * limiter's script, ./stored-sessions.ts, tested byte for byte against the app; else the database,
 * in one statement, written out straight from the row with the same bytes: plugins/core-store
 * sessionJsonReader, tested field for field against findSession and byte for byte against the
 * app), then the subscriptions plugin's current tier, as its after-hook does; what better-auth's
 * endpoint does around that (router, hooks, cookie parsing) is skipped. Only the quiet case is answered here:
 *   - exactly one session cookie, signed with our secret (lib/auth-request.ts verifiedCookieToken),
 *     and no cookie-cache or don't-remember-me cookie (better-auth would clear or honour them);
 *   - a session that exists, has not expired and is not due for its sliding refresh
 *     (`updateAge`: better-auth then extends it and sets the cookie again).
 * Anything else (no cookie, a bad signature, an expired session, a refresh due, a query string)
 * goes to better-auth's endpoint. Nothing is cached past a change: each answer reads the session,
 * so a signed-out or revoked session is gone at once on every instance. On SQLite the read is
 * skipped while the database is unchanged since the last one for that token (lib/db ChangeStamp:
 * no commit by any connection or process, no write by this one), and that row, which a read
 * would give again, answers. What else is kept is only the writing out: when the read gives back
 * the very values (or copy and revocation mark) the last answer for that token was made of, those
 * bytes answer again, after the expiry and sliding-refresh check of this moment.
 */
/** What this route reads of better-auth's context (`auth.$context`). */
export type FastSessionContext = Pick<AuthContext, "sessionConfig" | "authCookies" | "secret" | "tables"> & {
  options: Parameters<typeof parseSessionOutput>[0] & { secondaryStorage?: unknown };
  internalAdapter: Pick<AuthContext["internalAdapter"], "findSession">;
};

export interface FastSessionOptions {
  context: Promise<FastSessionContext>;
  /** The endpoint's public path (BASE_PATH + /get-session). */
  path: string;
  /**
   * The database better-auth keeps sessions in: without secondary storage, the session and its
   * user are read in one statement and written out from the row (plugins/core-store
   * sessionJsonReader) instead of through findSession's adapter pipeline.
   */
  database?: Parameters<typeof sessionJsonReader>[0];
  /**
   * The Redis of better-auth's secondary storage (lib/redis.ts redisSecondaryStorage): with it,
   * the session's copy there is read directly (./stored-sessions.ts) instead of through findSession.
   */
  redis?: Redis;
}

/** The most tokens whose last answer from Redis is kept (the oldest is dropped first). */
const LAST_ANSWERS = 1000;

/** `row` without the fields in `hidden` (better-auth's output filter, its hidden fields found once by leftOut). */
function shown(row: Record<string, unknown>, hidden: ReadonlySet<string>): Record<string, unknown> {
  if (hidden.size === 0) return row;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(row)) if (!hidden.has(key)) out[key] = row[key];
  return out;
}

/** The fields better-auth's output shaping (`shape`: parseSessionOutput, parseUserOutput) leaves out, asked of it once. */
function leftOut(fields: Record<string, unknown>, shape: (row: Record<string, unknown>) => Record<string, unknown>): Set<string> {
  const probe: Record<string, unknown> = { id: "id" };
  for (const key of Object.keys(fields)) probe[key] = key;
  const kept = shape(probe);
  return new Set(Object.keys(probe).filter((key) => !(key in kept)));
}

const NO_STORE = { "content-type": "application/json", "cache-control": "no-store", pragma: "no-cache" };

/** The cookies of a Cookie header by name, each with every value it was given. */
function cookiesOf(header: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    const values = out.get(name);
    if (values) values.push(part.slice(eq + 1).trim());
    else out.set(name, [part.slice(eq + 1).trim()]);
  }
  return out;
}

export function getSessionLaneRoute({ context, path, database, redis }: FastSessionOptions): LaneRoute {
  /** The verified token of each request, found once for the limit and the answer. */
  const tokens = new WeakMap<LaneRequest, string | null>();
  let ctx: FastSessionContext | undefined;
  type Found = Awaited<ReturnType<FastSessionContext["internalAdapter"]["findSession"]>>;
  let findSession: (token: string) => Awaitable<Found> = () => null;
  /** The answer's JSON straight from the row, when sessions live in the database. */
  let readJson: ((token: string) => Awaitable<SessionJson | null>) | null = null;
  /** The reads of better-auth's copies in Redis, when sessions have them, and the fields its output leaves out. */
  let stored: { reads: ReturnType<typeof storedSessionReads>; hidden: { session: Set<string>; user: Set<string> } } | null = null;
  /** Each request's read of its copy in Redis, started beside the limiter's step (`early`). */
  const started = new WeakMap<LaneRequest, Promise<StoredRead>>();
  /**
   * The last answer made from each token's copy in Redis, with the copy's text and the user's
   * revocation mark it was made of: both are read again on every request, and only when both
   * are what they were is the copy not parsed and written out again.
   */
  const lastStored = new Map<string, { userId: string; text: string; mark: string | null | undefined; expiresAt: number; answer: LaneAnswer }>();
  void context.then((c) => {
    ctx = c;
    findSession = (token) => c.internalAdapter.findSession(token);
    if (!c.tables.session || !c.tables.user) return;
    const hidden = { session: leftOut(c.tables.session.fields, (o) => parseSessionOutput(c.options, o as never)), user: leftOut(c.tables.user.fields, (o) => parseUserOutput(c.options, o as never)) };
    if (database && !c.options.secondaryStorage) readJson = sessionJsonReader(database, { session: c.tables.session, user: c.tables.user }, hidden);
    if (redis && c.options.secondaryStorage) stored = { reads: storedSessionReads(redis), hidden };
  });

  /** Whether the session is current and not due for its sliding refresh. */
  function quiet(expiresAt: number, context: FastSessionContext): boolean {
    const { expiresIn, updateAge } = context.sessionConfig;
    return !(expiresAt < Date.now() || expiresAt - expiresIn * 1000 + updateAge * 1000 <= Date.now());
  }

  function answerOf(found: Found, context: FastSessionContext): LaneAnswer | null {
    if (!found || !quiet(found.session.expiresAt.valueOf(), context)) return null;
    const returned = { session: parseSessionOutput(context.options, found.session), user: parseUserOutput(context.options, found.user) };
    return { status: 200, headers: NO_STORE, body: JSON.stringify(withCurrentTier(returned) ?? returned) };
  }

  /** answerOf's bytes, from better-auth's copy in Redis (the output filter and the current tier applied as answerOf applies them). */
  function storedAnswerOf(found: StoredSession | null, hidden: NonNullable<typeof stored>["hidden"], context: FastSessionContext): LaneAnswer | null {
    const expiresAt = found ? Date.parse(found.session.expiresAt ?? "") : NaN;
    if (!found || !Number.isFinite(expiresAt) || !quiet(expiresAt, context)) return null;
    const returned = { session: shown(found.session, hidden.session), user: shown(found.user, hidden.user) };
    return { status: 200, headers: NO_STORE, body: JSON.stringify(withCurrentTier(returned) ?? returned) };
  }

  /** answerOf's bytes, written from the row (the subscriptions plugin's current tier as withCurrentTier sets it). */
  function jsonAnswerOf(found: SessionJson | null, context: FastSessionContext): LaneAnswer | null {
    if (!found || !quiet(found.expiresAt, context)) return null;
    const tier = currentTierOf(found.value("user", "subscriptionTier"));
    return { status: 200, headers: NO_STORE, body: found.json(found.value("session", "subscriptionTier") === tier ? undefined : { subscriptionTier: tier }) };
  }

  /** The session token of the quiet case's cookies, or null. */
  function tokenOf(req: LaneRequest): string | null {
    if (tokens.has(req)) return tokens.get(req)!;
    let token: string | null = null;
    const header = req.headers.cookie;
    // One session cookie only: with another `*.session_token` cookie beside it the app's limiter
    // may key the request differently (lib/auth-limits.ts takes the first), so the app answers.
    const first = header ? header.indexOf(".session_token=") : -1;
    if (header && ctx && first >= 0 && header.indexOf(".session_token=", first + 1) < 0) {
      const cookies = cookiesOf(header);
      const { sessionToken, sessionData, dontRememberToken } = ctx.authCookies;
      const values = cookies.get(sessionToken.name);
      if (values?.length === 1 && !cookies.has(sessionData.name) && !cookies.has(dontRememberToken.name)) token = verifiedCookieToken(values[0]!, ctx.secret) ?? null;
    }
    tokens.set(req, token);
    return token;
  }

  return {
    method: "GET",
    path,
    label: path,
    // The key lib/auth-limits.ts counts a signed session cookie under; without the quiet case's
    // cookie the request goes to the app, whose limiter counts it.
    credential: (req) => {
      const token = tokenOf(req);
      return token ? { limit: "session", key: sessionLimitKey(token) } : null;
    },
    early(req) {
      const token = tokenOf(req);
      if (!token || !stored) return;
      const read = stored.reads.start(token);
      // Dropped when the limit refuses; a failure is the answer's, when there is one.
      read.catch(() => {});
      started.set(req, read);
    },
    // At once when the session is read from SQLite.
    answer(req) {
      const token = tokenOf(req);
      const context = ctx;
      if (!token || !context) return null;
      if (stored) {
        const { reads, hidden } = stored;
        return (started.get(req) ?? reads.start(token)).then((read) => {
          // The copy and the mark read now are the ones the last answer was made of: only the
          // time (expiry, sliding refresh) can have changed it.
          const kept = lastStored.get(token);
          if (kept && read.userId !== undefined && read.userId === kept.userId && read.text === kept.text && read.mark === kept.mark) {
            return quiet(kept.expiresAt, context) ? kept.answer : null;
          }
          return reads.finish(token, read).then((found) => {
            const answer = storedAnswerOf(found, hidden, context);
            if (answer && found && read.userId === found.session.userId && read.text !== null) {
              keep(lastStored, token, { userId: read.userId, text: read.text, mark: read.mark, expiresAt: Date.parse(found.session.expiresAt ?? ""), answer }, LAST_ANSWERS);
            }
            return answer;
          });
        });
      }
      if (readJson) return thenOrNow(readJson(token), (found) => jsonAnswerOf(found, context));
      return thenOrNow(findSession(token), (found) => answerOf(found, context));
    },
  };
}
