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

export function addressOf(pubkey: string): string {
  return PublicKey.fromString(pubkey).toAddress();
}
