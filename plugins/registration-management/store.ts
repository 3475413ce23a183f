import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { Kysely } from "kysely";
import { rowReader } from "../../lib/db/sqlite-values.js";
import type { Database } from "../../lib/db/tables.js";
import { anonymousClientIds, deleteAnonymousClients } from "../oauth-store/clients.js";

/**
 * The registration access tokens of RFC 7592 and when each client was last used. A token is
 * stored as its SHA-256 only (like client secrets and OAuth tokens here): a copy of the
 * database manages no client.
 */
export interface ClientRegistration {
  clientId: string;
  tokenHash: string;
  createdAt: Date;
  lastUsedAt: Date | null;
}

const toRegistration = rowReader("oauthClientRegistration", ["clientId", "tokenHash", "createdAt", "lastUsedAt"]);

const hash = (token: string) => createHash("sha256").update(token, "utf8").digest("hex");

/** 256 bits, base64url: an opaque bearer credential (RFC 6750 §2.1 b64token). */
export function newRegistrationToken(): string {
  return randomBytes(32).toString("base64url");
}

/** Sets (or replaces: a rotation) the client's registration access token. */
export async function saveRegistrationToken(db: Kysely<Database>, clientId: string, token: string, now = new Date()): Promise<void> {
  const updated = await db.updateTable("oauthClientRegistration").set({ tokenHash: hash(token) }).where("clientId", "=", clientId).executeTakeFirst();
  if (Number(updated.numUpdatedRows)) return;
  await db.insertInto("oauthClientRegistration").values({ id: clientId, clientId, tokenHash: hash(token), createdAt: now, lastUsedAt: null }).execute();
}

/** Whether `token` is the client's registration access token, compared in constant time. */
export async function checkRegistrationToken(db: Kysely<Database>, clientId: string, token: string): Promise<boolean> {
  const row = await db.selectFrom("oauthClientRegistration").selectAll().where("clientId", "=", clientId).executeTakeFirst();
  if (!row) return false;
  const stored = Buffer.from(toRegistration(row).tokenHash, "hex");
  const given = Buffer.from(hash(token), "hex");
  return stored.length === given.length && timingSafeEqual(stored, given);
}

const HOUR = 60 * 60 * 1000;

/** Marks the client used at `now` (a token was issued to it), unless the stored mark is newer than `everyMs`. */
export async function touchClient(db: Kysely<Database>, clientId: string, now = new Date(), everyMs = HOUR): Promise<void> {
  const stale = new Date(now.getTime() - everyMs);
  await db
    .updateTable("oauthClientRegistration")
    .set({ lastUsedAt: now })
    .where("clientId", "=", clientId)
    .where((eb) => eb.or([eb("lastUsedAt", "is", null), eb("lastUsedAt", "<", stale)]))
    .execute();
}

/**
 * `touchClient` at most once per client per `everyMs` in this process, so a token request is
 * not a write (nor a statement) each time: the mark only needs hourly precision against a TTL
 * of days (ANONYMOUS_CLIENT_TTL_DAYS). Each instance keeps its own memory, and the statement's
 * own condition keeps several instances from rewriting a fresh mark. A client is remembered
 * before its statement runs (concurrent requests send one) and forgotten if it fails (the next
 * request tries again). At most `maxClients` are remembered; the oldest entry goes first.
 * Answers whether the statement was sent.
 */
export function clientUseRecorder(db: Kysely<Database>, options: { everyMs?: number; maxClients?: number } = {}) {
  const everyMs = options.everyMs ?? HOUR;
  const maxClients = options.maxClients ?? 10_000;
  const touched = new Map<string, number>();
  return async (clientId: string, now = new Date()): Promise<boolean> => {
    const last = touched.get(clientId);
    if (last !== undefined && now.getTime() - last < everyMs) return false;
    touched.delete(clientId);
    if (touched.size >= maxClients) touched.delete(touched.keys().next().value!);
    touched.set(clientId, now.getTime());
    try {
      await touchClient(db, clientId, now, everyMs);
    } catch (err) {
      if (touched.get(clientId) === now.getTime()) touched.delete(clientId);
      throw err;
    }
    return true;
  };
}

/**
 * Deletes anonymous registrations (no owning user or reference) not used since `cutoff` (or,
 * never used, registered before it); their tokens and consents go with them (foreign keys).
 * Clients a person registered while signed in are theirs to delete and never expire here.
 * Answers the client ids deleted.
 */
export async function expireUnusedAnonymousClients(db: Kysely<Database>, cutoff: Date): Promise<string[]> {
  const unused = await db
    .selectFrom("oauthClientRegistration")
    .select("clientId")
    .where("clientId", "in", anonymousClientIds(db))
    .where((eb) => eb.or([eb.and([eb("lastUsedAt", "is", null), eb("createdAt", "<", cutoff)]), eb("lastUsedAt", "<", cutoff)]))
    .limit(500)
    .execute();
  const ids = unused.map((row) => row.clientId);
  await deleteAnonymousClients(db, ids);
  return ids;
}
