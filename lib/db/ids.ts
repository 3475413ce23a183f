import { ID_ALPHABET, randomString } from "../random.js";

/**
 * A token row's id that follows time, for the rows the refresh lane writes
 * (plugins/fast-lane/refresh.ts): the milliseconds in nine base-36 digits, then 23 of
 * better-auth's id characters, drawn as it draws them (137 bits; lib/random.ts), 32 in all
 * like better-auth's own ids. A refresh
 * writes two token rows; with random ids each lands on a random leaf of its table's id index
 * (and the access token's `refreshId` index) and writes that page out, where time-ordered ids
 * all land on the last one, which the rotations committed together share. Nothing reads meaning
 * into a row id, and the time is the row's `createdAt` anyway.
 *
 * Not better-auth's `advanced.database.generateId`: with any generator of its own there, its
 * organization plugin asks for a verified e-mail before an invitation can be accepted (it no
 * longer trusts invitation ids to be unguessable).
 */
export function timeOrderedId(): string {
  return Date.now().toString(36).padStart(9, "0") + randomString(23, ID_ALPHABET);
}
