import { PublicKey } from "@bsv/sdk";
import { bapIdFromPubkey } from "bsv-bap";

/** A BAP identity key: base58 of ripemd160(sha256(root address)), no checksum. */
export const BAP_ID_PATTERN = /^[1-9A-HJ-NP-Za-km-z]{20,44}$/;

export function isBapId(value: unknown): value is string {
  return typeof value === "string" && BAP_ID_PATTERN.test(value);
}

/**
 * The member key is the key at the identity's root path; its address is the root address,
 * so `bapIdFromPubkey(memberPubkey) === bapId`. (The current address rotates and is data
 * from registration, not derivable.)
 */
export function bapIdOfMemberKey(pubkey: string): string {
  return bapIdFromPubkey(pubkey);
}

/**
 * Whether `pubkey` is the identity's member key: its address derives the bapId, or it is the
 * member key the identity registered (`identity` as stored, when there is one).
 */
export function isMemberKeyOf(identity: { memberPubkey?: string | null } | null | undefined, bapId: string, pubkey: string): boolean {
  return bapIdOfMemberKey(pubkey) === bapId || (identity?.memberPubkey != null && identity.memberPubkey === pubkey);
}

export function addressOf(pubkey: string): string {
  return PublicKey.fromString(pubkey).toAddress();
}

/**
 * Key-only accounts have no e-mail; better-auth needs a unique one. `.invalid` (RFC 2606 §2)
 * can never receive mail, and hex keeps case-distinct bapIds distinct after e-mail
 * lower-casing. The domain is reserved for these addresses: no person may sign up with, or
 * change to, an address in it (BAP ids are public, so anyone could squat a key's address).
 */
export const KEY_ACCOUNT_EMAIL_DOMAIN = "bap.invalid";

export function keyAccountEmail(bapId: string): string {
  return `bap-${Buffer.from(bapId).toString("hex")}@${KEY_ACCOUNT_EMAIL_DOMAIN}`;
}

/** An address in the reserved domain or below it, in any case, with or without the root dot. */
export function isKeyAccountEmail(email: unknown): boolean {
  if (typeof email !== "string") return false;
  const domain = email.slice(email.lastIndexOf("@") + 1).trim().toLowerCase().replace(/\.+$/, "");
  return domain === KEY_ACCOUNT_EMAIL_DOMAIN || domain.endsWith(`.${KEY_ACCOUNT_EMAIL_DOMAIN}`);
}
