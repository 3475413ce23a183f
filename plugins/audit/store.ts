import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import { rowReader } from "../../lib/db/sqlite-values.js";
import { requestContext, type Logger } from "../../lib/logger.js";
import type { Database } from "../../lib/db/tables.js";

/** Every read and write of the `auditEvent` table. */

/** The security events we record (docs/operations.md, "Audit log"). */
export const AUDIT_EVENTS = [
  "sign_in",
  "sign_in.failed",
  "refresh_token.reuse",
  "client.registered",
  "client.updated",
  "client.deleted",
  "consent.granted",
  "consent.revoked",
  "agent.approved",
  "agent.revoked",
  "signing_key.rotated",
  "admin.action",
] as const;
export type AuditEventName = (typeof AUDIT_EVENTS)[number];

/** What a caller states; `at` and `requestId` are filled in here. */
export interface AuditEntry {
  event: AuditEventName;
  userId?: string | null;
  clientId?: string | null;
  ip?: string | null;
  /** Small facts only (method, reason, scopes): never a token, password, key or secret. */
  detail?: Record<string, unknown>;
}

export interface AuditEvent {
  id: string;
  at: Date;
  event: string;
  userId: string | null;
  clientId: string | null;
  ip: string | null;
  requestId: string | null;
  detail: string | null;
}

const toEvent = rowReader("auditEvent", ["id", "at", "event", "userId", "clientId", "ip", "requestId", "detail"]);

/** Kept small: a detail that grows past this is cut, so no caller can fill the table by accident. */
const MAX_DETAIL = 2000;

/**
 * Writes one audit row. Never throws: a request must not fail because its audit row could not
 * be written (the failure is logged with the event, so it is not lost silently).
 */
export async function recordAuditEvent(db: Kysely<Database>, logger: Logger | undefined, entry: AuditEntry): Promise<void> {
  const requestId = requestContext.getStore()?.requestId ?? null;
  try {
    const detail = entry.detail && Object.keys(entry.detail).length ? JSON.stringify(entry.detail).slice(0, MAX_DETAIL) : null;
    await db
      .insertInto("auditEvent")
      .values({ id: randomUUID(), at: new Date(), event: entry.event, userId: entry.userId ?? null, clientId: entry.clientId ?? null, ip: entry.ip ?? null, requestId, detail })
      .execute();
  } catch (err) {
    logger?.error("audit event not recorded", { event: entry.event, userId: entry.userId ?? undefined, err });
  }
}

export interface AuditQuery {
  limit: number;
  /** Only events strictly older than this (paging backwards). */
  before?: Date;
  event?: string;
  userId?: string;
}

/** Newest first. */
export async function listAuditEvents(db: Kysely<Database>, query: AuditQuery): Promise<AuditEvent[]> {
  let select = db.selectFrom("auditEvent").selectAll();
  if (query.before) select = select.where("at", "<", query.before);
  if (query.event) select = select.where("event", "=", query.event);
  if (query.userId) select = select.where("userId", "=", query.userId);
  const rows = await select.orderBy("at", "desc").orderBy("id", "desc").limit(query.limit).execute();
  return rows.map(toEvent);
}

/**
 * Deletes up to `limit` events older than `olderThan`, oldest first; how many it deleted. One
 * short statement (a batch by the `at` index): the caller repeats it while it deletes a full batch.
 */
export async function pruneAuditEvents(db: Kysely<Database>, olderThan: Date, limit: number): Promise<number> {
  const batch = db.selectFrom("auditEvent").select("id").where("at", "<", olderThan).orderBy("at").limit(limit);
  const result = await db.deleteFrom("auditEvent").where("id", "in", batch).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** The JSON shape of an event (routes/admin/audit-log.ts and the admin CLI). */
export function auditEventJson(event: AuditEvent) {
  let detail: unknown = null;
  try {
    detail = event.detail ? JSON.parse(event.detail) : null;
  } catch {
    detail = event.detail;
  }
  return { ...event, at: event.at.toISOString(), detail };
}
