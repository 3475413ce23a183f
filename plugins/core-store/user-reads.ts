import { getRequestStateAsyncLocalStorage } from "@better-auth/core/context";
import type { BetterAuthPlugin } from "better-auth";

/**
 * One read of a user by id per request. Creating a session reads the same user row four times
 * in a row: the sign-in endpoint (to check it), the subscriptions plugin's session hook (the
 * tier), the admin plugin's session hook (a ban) and better-auth's copy of the session into
 * secondary storage (the user beside it). Within one request those answers are the same row,
 * so the first read's promise is kept in better-auth's per-request state and the others take a
 * copy of its answer: one round trip to the database instead of four.
 *
 * Only `findOne` of a user by its id alone (no select, no join), and only inside a request
 * (better-auth's request state; outside one every read goes to the database). Any write to the
 * user table through the adapter in the same request, before it starts and after it ends, forgets
 * what was read, and so does every direct write of our own (plugins/core-store/users.ts calls
 * forgetUserReads), so a read after a write sees the write. Nothing outlives the request: a change
 * made by another request or instance is seen by the next request, as before.
 */

type UserRow = Record<string, unknown>;
type Reads = Map<string, Promise<UserRow | null>>;
/** This memo's key in better-auth's per-request state. */
const READS = Object.freeze({});
let storage: Awaited<ReturnType<typeof getRequestStateAsyncLocalStorage>> | undefined;

/**
 * This request's reads, or null outside a request. Found and made with no await between the
 * look and the set (defineRequestState's `get` awaits its initialiser, so callers arriving
 * together would each make their own).
 */
async function readsOfThisRequest(): Promise<Reads | null> {
  storage ??= await getRequestStateAsyncLocalStorage();
  const state = storage.getStore() as WeakMap<object, unknown> | undefined;
  if (!state) return null;
  let reads = state.get(READS) as Reads | undefined;
  if (!reads) state.set(READS, (reads = new Map()));
  return reads;
}

/** What the wrapper reads of a findOne call. */
interface FindOne {
  model: string;
  where?: { field: string; value?: unknown; operator?: string; connector?: string }[];
  select?: unknown;
  join?: unknown;
}

/** The user id a findOne reads by, when it is the plain read by id this memo keeps. */
function userIdOf(query: FindOne): string | null {
  if (query.model !== "user" || query.select !== undefined || query.join !== undefined) return null;
  const where = query.where;
  if (!where || where.length !== 1) return null;
  const [only] = where;
  if (only!.field !== "id" || typeof only!.value !== "string") return null;
  if (only!.operator !== undefined && only!.operator !== "eq") return null;
  return only!.value;
}

/** Forgets this request's user reads (after a write to the user table that bypassed the adapter). */
export async function forgetUserReads(): Promise<void> {
  (await readsOfThisRequest())?.clear();
}

/** The adapter methods that write, each forgetting this request's user reads around a write to "user". */
const WRITES = ["create", "update", "updateMany", "delete", "deleteMany", "consumeOne", "incrementOne"] as const;

type Adapter = Record<string, unknown> & { findOne: (query: FindOne) => Promise<unknown> };

/** Wraps better-auth's adapter in place (the internal adapter holds the same object). */
export function readUsersOncePerRequest(adapter: Adapter): void {
  const findOne = adapter.findOne.bind(adapter);
  adapter.findOne = async (query: FindOne) => {
    const userId = userIdOf(query);
    const memo = userId === null ? null : await readsOfThisRequest();
    if (userId === null || !memo) return findOne(query);
    let read = memo.get(userId);
    if (!read) {
      read = findOne(query) as Promise<UserRow | null>;
      memo.set(userId, read);
      // A failed read is not kept: the next caller tries again.
      read.catch(() => memo.get(userId) === read && memo.delete(userId));
    }
    const user = await read;
    return user ? { ...user } : null;
  };
  for (const name of WRITES) {
    const write = adapter[name];
    if (typeof write !== "function") continue;
    adapter[name] = async (query: { model?: string }) => {
      if (query?.model !== "user") return write.call(adapter, query);
      await forgetUserReads();
      try {
        return await write.call(adapter, query);
      } finally {
        await forgetUserReads();
      }
    };
  }
}

/** The plugin that applies readUsersOncePerRequest to better-auth's adapter at start-up. */
export function userReadsOncePerRequest() {
  return {
    id: "user-reads-once-per-request",
    init(ctx) {
      readUsersOncePerRequest(ctx.adapter as unknown as Adapter);
    },
  } satisfies BetterAuthPlugin;
}
