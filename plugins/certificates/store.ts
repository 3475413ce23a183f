import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import { rowReader } from "../../lib/db/sqlite-values.js";
import type { Database } from "../../lib/db/tables.js";

/**
 * Every read and write of `issuedCertificate`. Revocation moves one step at a time and only
 * from the state the caller saw (compare and set), so two requests cannot both move it.
 */

/** BRC-52 revocation progress (spec, "States and transitions": certificate revocation). */
export const REVOCATION_STATES = ["prepared", "broadcast", "observed", "confirmed"] as const;
export type RevocationState = (typeof REVOCATION_STATES)[number];

export interface IssuedCertificate {
  id: string;
  serialNumber: string;
  type: string;
  subject: string;
  certifier: string;
  revocationOutpoint: string;
  /** Encrypted field values, by field name. */
  fields: Record<string, string>;
  signature: string;
  issuedAt: Date;
  revocationState: RevocationState | null;
  revocationTxid: string | null;
  revocationUpdatedAt: Date | null;
}

const read = rowReader("issuedCertificate", ["id", "serialNumber", "type", "subject", "certifier", "revocationOutpoint", "fields", "signature", "issuedAt", "revocationState", "revocationTxid", "revocationUpdatedAt"]);
const toCertificate = (row: Parameters<typeof read>[0]): IssuedCertificate => {
  const r = read(row);
  // `revocationState` is text in the table; this store writes it only from a `RevocationState`.
  return { ...r, fields: JSON.parse(r.fields) as Record<string, string>, revocationState: r.revocationState as RevocationState | null };
};

export type NewCertificate = Pick<IssuedCertificate, "serialNumber" | "type" | "subject" | "certifier" | "revocationOutpoint" | "fields" | "signature">;

export async function recordCertificate(db: Kysely<Database>, cert: NewCertificate, now = new Date()): Promise<void> {
  await db
    .insertInto("issuedCertificate")
    .values({ id: randomUUID(), ...cert, fields: JSON.stringify(cert.fields), issuedAt: now })
    .execute();
}

export async function findCertificate(db: Kysely<Database>, serialNumber: string): Promise<IssuedCertificate | null> {
  const row = await db.selectFrom("issuedCertificate").selectAll().where("serialNumber", "=", serialNumber).executeTakeFirst();
  return row ? toCertificate(row) : null;
}

/**
 * Moves a certificate's revocation from `from` (null: not revoked) to `to`; false when it was
 * no longer at `from` (another request moved it first).
 */
export async function moveRevocation(db: Kysely<Database>, serialNumber: string, from: RevocationState | null, to: RevocationState, txid?: string, now = new Date()): Promise<boolean> {
  let query = db
    .updateTable("issuedCertificate")
    .set({ revocationState: to, revocationUpdatedAt: now, ...(txid ? { revocationTxid: txid } : {}) })
    .where("serialNumber", "=", serialNumber);
  query = from === null ? query.where("revocationState", "is", null) : query.where("revocationState", "=", from);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** The certificates issued to a subject, newest first. */
export async function listCertificatesOfSubject(db: Kysely<Database>, subject: string): Promise<IssuedCertificate[]> {
  const rows = await db.selectFrom("issuedCertificate").selectAll().where("subject", "=", subject).orderBy("issuedAt", "desc").orderBy("id").execute();
  return rows.map(toCertificate);
}

/** Revocations not yet final (prepared, broadcast, observed), the longest waiting first, at most `limit`. */
export async function listRevocationsInProgress(db: Kysely<Database>, limit: number): Promise<IssuedCertificate[]> {
  const rows = await db
    .selectFrom("issuedCertificate")
    .selectAll()
    .where("revocationState", "in", ["prepared", "broadcast", "observed"])
    .orderBy("revocationUpdatedAt", "asc")
    .orderBy("id")
    .limit(limit)
    .execute();
  return rows.map(toCertificate);
}
