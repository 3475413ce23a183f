import { randomBytes, randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import { asDate, rowReader } from "../../lib/db/sqlite-values.js";
import type { Database } from "../../lib/db/tables.js";
import { clientOwnerIds, isClientOwnedBy } from "../oauth-store/clients.js";

/**
 * Every read and write of the `domainVerification` table. Reads by id take the caller's user
 * id, so someone else's record reads as missing. What a status means is decided here once
 * (`statusOf`), and so is the one question the consent page asks (`isVerifiedClientHost`).
 */

export type VerificationMethod = "dns" | "https";
/** `expired`: the challenge ran out before it was met, or a verification is older than its validity. */
export type VerificationStatus = "pending" | "verified" | "expired" | "failed";

export interface DomainVerification {
  id: string;
  userId: string;
  bapId: string;
  domain: string;
  method: VerificationMethod;
  token: string;
  oauthClientId: string | null;
  status: string;
  challengeExpiresAt: Date;
  verifiedAt: Date | null;
  expiresAt: Date | null;
  lastCheckedAt: Date | null;
  failureReason: string | null;
  createdAt: Date;
}

const readVerification = rowReader("domainVerification", ["id", "userId", "bapId", "domain", "method", "token", "oauthClientId", "status", "challengeExpiresAt", "verifiedAt", "expiresAt", "lastCheckedAt", "failureReason", "createdAt"]);

/** `method` is text in the table; this store writes it only from a `VerificationMethod`. */
function toVerification(row: Parameters<typeof readVerification>[0]): DomainVerification {
  const record = readVerification(row);
  return { ...record, method: record.method as VerificationMethod };
}

/**
 * The status as of `now`. A verified record that has run past `expiresAt` is expired (it
 * needs verifying again); a record never verified whose challenge has run out is expired too.
 */
export function statusOf(record: DomainVerification, now = new Date()): VerificationStatus {
  if (record.verifiedAt && record.expiresAt) {
    if (record.expiresAt <= now) return "expired";
    if (record.status === "verified") return "verified";
  }
  if (record.challengeExpiresAt <= now) return "expired";
  return record.status === "failed" ? "failed" : "pending";
}

/**
 * Whether the challenge may still be answered: until the challenge expires, and for a domain
 * that was verified once, any time after (re-verification proves the same token again).
 */
export function canVerify(record: DomainVerification, now = new Date()): boolean {
  return record.verifiedAt !== null || record.challengeExpiresAt > now;
}

export interface NewVerification {
  bapId: string;
  domain: string;
  method: VerificationMethod;
  oauthClientId: string | null;
  challengeExpiresAt: Date;
}

export async function createVerification(db: Kysely<Database>, userId: string, input: NewVerification, now = new Date()): Promise<DomainVerification> {
  const row = {
    id: randomUUID(),
    userId,
    ...input,
    // 192 bits from the CSPRNG: the proof that whoever controls the domain read it from us.
    token: randomBytes(24).toString("base64url"),
    status: "pending",
    verifiedAt: null,
    expiresAt: null,
    lastCheckedAt: null,
    failureReason: null,
    createdAt: now,
  };
  await db.insertInto("domainVerification").values(row).execute();
  return row;
}

/**
 * The user's verifications that are pending: never verified, with a challenge that may still be
 * met (a failed check does not end one). How many, and when the first of them runs out.
 */
export async function pendingVerifications(db: Kysely<Database>, userId: string, now = new Date()): Promise<{ count: number; firstExpiry: Date | null }> {
  const row = await db
    .selectFrom("domainVerification")
    .select((eb) => [eb.fn.countAll().as("count"), eb.fn.min("challengeExpiresAt").as("firstExpiry")])
    .where("userId", "=", userId)
    .where("verifiedAt", "is", null)
    .where("challengeExpiresAt", ">", now)
    .executeTakeFirst();
  return { count: Number(row?.count ?? 0), firstExpiry: row?.firstExpiry ? asDate(row.firstExpiry) : null };
}

export async function findOwnedVerification(db: Kysely<Database>, userId: string, id: string): Promise<DomainVerification | null> {
  const row = await db.selectFrom("domainVerification").selectAll().where("userId", "=", userId).where("id", "=", id).executeTakeFirst();
  return row ? toVerification(row) : null;
}

/** The records of one of the user's profiles, newest first. */
export async function listVerifications(db: Kysely<Database>, userId: string, bapId: string): Promise<DomainVerification[]> {
  const rows = await db.selectFrom("domainVerification").selectAll().where("userId", "=", userId).where("bapId", "=", bapId).orderBy("createdAt", "desc").orderBy("id", "asc").execute();
  return rows.map(toVerification);
}

export type CheckOutcome = { ok: true } | { ok: false; reason: string };

/**
 * Records a check. Met: verified now, until now + `validityMs`. Not met: a record that was
 * never verified becomes failed; a verified one keeps its verification until it expires (a
 * flaky check does not withdraw it early), with the reason kept either way.
 */
export async function recordCheck(db: Kysely<Database>, record: DomainVerification, outcome: CheckOutcome, validityMs: number, now = new Date()): Promise<DomainVerification> {
  const changes = outcome.ok
    ? { status: "verified", verifiedAt: now, expiresAt: new Date(now.getTime() + validityMs), failureReason: null, lastCheckedAt: now }
    : { status: record.status === "verified" ? "verified" : "failed", failureReason: outcome.reason, lastCheckedAt: now };
  await db.updateTable("domainVerification").set(changes).where("id", "=", record.id).execute();
  return { ...record, ...changes };
}

/** Whether `userId` owns the OAuth client `clientId` (its public client_id). */
export function ownsClient(db: Kysely<Database>, userId: string, clientId: string): Promise<boolean> {
  return isClientOwnedBy(db, clientId, userId);
}

/**
 * The consent page's question: has `host` a verification in force tied to the client
 * `clientId`, made by the person who owns that client? Exact host match: a verified
 * example.com says nothing about evil.example.com.
 */
export async function isVerifiedClientHost(db: Kysely<Database>, clientId: string, host: string, now = new Date()): Promise<boolean> {
  const rows = await db
    .selectFrom("domainVerification")
    .selectAll()
    .where("oauthClientId", "=", clientId)
    .where("userId", "in", clientOwnerIds(db, clientId))
    .where("domain", "=", host.toLowerCase())
    .where("status", "=", "verified")
    .execute();
  return rows.some((row) => statusOf(toVerification(row), now) === "verified");
}
