import { generateId } from "@better-auth/core/utils/id";

/** The tables whose rows are made on every grant and refresh: their ids follow time. */
const TIME_ORDERED = new Set(["oauthAccessToken", "oauthRefreshToken"]);

/**
 * better-auth's `advanced.database.generateId`: its own 32-character random id for every table
 * but the token tables, whose ids start with the time they were made (milliseconds, nine
 * base-36 digits) and end with 23 random characters (137 bits). A refresh writes two token rows;
 * with random ids each lands on a random leaf of its table's id index (and the access token's
 * `refreshId` index) and writes that page out, where time-ordered ids all land on the last
 * one, which the rotations committed together share. Nothing reads meaning into a row id, and
 * the time is the row's `createdAt` anyway.
 */
export function rowId({ model, size }: { model: string; size?: number }): string {
  if (!TIME_ORDERED.has(model) || (size !== undefined && size !== 32)) return generateId(size);
  return Date.now().toString(36).padStart(9, "0") + generateId(23);
}
