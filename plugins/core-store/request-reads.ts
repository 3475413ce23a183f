import { getRequestStateAsyncLocalStorage } from "@better-auth/core/context";
import type { BetterAuthPlugin } from "better-auth";

/**
 * One read of a row by its key per request, for the rows better-auth and its plugins read again
 * and again within one request:
 * - a user by id: creating a session read it four times in a row (the sign-in endpoint, the
 *   subscriptions plugin's tier hook, the admin plugin's ban hook, better-auth's copy of the
 *   session into secondary storage);
 * - an OAuth client by client_id: the authorization endpoint read it three times, the token
 *   endpoint twice.
 * Within one request those answers are the same row, so the first read's promise is kept in
 * better-auth's per-request state and the others take a copy of its answer.
 *
 * Only `findOne` by that key alone (no select, no join), and only inside a request (better-auth's
 * request state; outside one every read goes to the database). Any write to one of these tables
 * through the adapter in the same request, before it starts and after it ends, forgets what was
 * read, and so does every direct write of our own to them (plugins/core-store/users.ts and
 * plugins/oauth-store/clients.ts call forgetRequestReads), so a read after a write sees the
 * write. Nothing outlives the request, and within it a row is shared for at most MAX_AGE_MS (a
 * request that waits, or work it left running in the background, reads again): a change made
 * by another request or instance is seen as before, give or take that second.
 */

/** How long a read is shared within one request. */
export const MAX_AGE_MS = 1000;

/** The tables whose rows are read once per request, each by its key. */
const KEYS: Readonly<Record<string, string>> = { user: "id", oauthClient: "clientId" };

type Row = Record<string, unknown>;
type Reads = Map<string, { read: Promise<Row | null>; at: number }>;
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

/** The memo's key for a findOne that is the plain read by key this memo keeps, else null. */
function keyOf(query: FindOne): string | null {
  const field = Object.hasOwn(KEYS, query.model) ? KEYS[query.model] : undefined;
  if (!field || query.select !== undefined || query.join !== undefined) return null;
  const where = query.where;
  if (!where || where.length !== 1) return null;
  const [only] = where;
  if (only!.field !== field || typeof only!.value !== "string") return null;
  if (only!.operator !== undefined && only!.operator !== "eq") return null;
  return `${query.model}\u0000${only!.value}`;
}

/** A caller's own copy of a kept row: its fields, and its lists (redirect URIs, scopes) copied too. */
function copyOf(row: Row): Row {
  const copy: Row = { ...row };
  for (const field in copy) if (Array.isArray(copy[field])) copy[field] = [...(copy[field] as unknown[])];
  return copy;
}

/** Forgets this request's reads (after a direct write to one of these tables, past the adapter). */
export async function forgetRequestReads(): Promise<void> {
  (await readsOfThisRequest())?.clear();
}

/** The adapter methods that write, each forgetting this request's reads around a write to one of these tables. */
const WRITES = ["create", "update", "updateMany", "delete", "deleteMany", "consumeOne", "incrementOne"] as const;

type Adapter = Record<string, unknown> & { findOne: (query: FindOne) => Promise<unknown> };

/** Wraps better-auth's adapter in place (the internal adapter holds the same object). */
export function readOncePerRequest(adapter: Adapter, maxAgeMs = MAX_AGE_MS): void {
  const findOne = adapter.findOne.bind(adapter);
  adapter.findOne = async (query: FindOne) => {
    const key = keyOf(query);
    const memo = key === null ? null : await readsOfThisRequest();
    if (key === null || !memo) return findOne(query);
    const now = performance.now();
    let kept = memo.get(key);
    if (!kept || now - kept.at > maxAgeMs) {
      const entry = { read: findOne(query) as Promise<Row | null>, at: now };
      memo.set(key, (kept = entry));
      // A failed read is not kept: the next caller tries again.
      entry.read.catch(() => memo.get(key) === entry && memo.delete(key));
    }
    const row = await kept.read;
    return row ? copyOf(row) : null;
  };
  for (const name of WRITES) {
    const write = adapter[name];
    if (typeof write !== "function") continue;
    adapter[name] = async (query: { model?: string }) => {
      if (!(typeof query?.model === "string" && Object.hasOwn(KEYS, query.model))) return write.call(adapter, query);
      await forgetRequestReads();
      try {
        return await write.call(adapter, query);
      } finally {
        await forgetRequestReads();
      }
    };
  }
}

/** The plugin that applies readOncePerRequest to better-auth's adapter at start-up. */
export function readsOncePerRequest() {
  return {
    id: "reads-once-per-request",
    init(ctx) {
      readOncePerRequest(ctx.adapter as unknown as Adapter);
    },
  } satisfies BetterAuthPlugin;
}
