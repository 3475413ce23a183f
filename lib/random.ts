import { randomFillSync } from "node:crypto";

/**
 * Random strings for the hot paths (the refresh grant's tokens and row ids): the same
 * characters, drawn the same way, as better-auth's `generateRandomString` / `generateId`
 * (each character a byte of the CSPRNG, bytes at or above the largest multiple of the
 * alphabet's length rejected, so every character is equally likely), but from a pool of
 * node:crypto's random bytes refilled 4 KiB at a time, with the alphabet built once. Theirs
 * builds the alphabet and a buffer and asks WebCrypto for bytes on every call: four times a
 * refresh, about 3% of its main thread. Each byte of the pool is used once.
 */

const POOL_SIZE = 4096;
const pool = new Uint8Array(POOL_SIZE);
let next = POOL_SIZE;

/** better-auth's "A-Z", "a-z" (its refresh and access tokens). */
export const TOKEN_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
/** better-auth's "a-z", "A-Z", "0-9" (its generateId). */
export const ID_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/** `length` characters of `alphabet` (2 to 256 characters), each uniformly at random. */
export function randomString(length: number, alphabet: string): string {
  const size = alphabet.length;
  if (size < 2 || size > 256) throw new RangeError("randomString: an alphabet of 2 to 256 characters");
  const limit = 256 - (256 % size);
  let out = "";
  while (out.length < length) {
    if (next === POOL_SIZE) {
      randomFillSync(pool);
      next = 0;
    }
    const byte = pool[next++]!;
    if (byte < limit) out += alphabet[byte % size];
  }
  return out;
}
