import { createHmac } from "node:crypto";

/** RFC 4648 §6 base32 (the otpauth `secret`), padding and spaces ignored. */
export function base32Decode(text: string): Buffer {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const ch of text.replace(/[\s=]/g, "").toUpperCase()) {
    const index = alphabet.indexOf(ch);
    if (index < 0) throw new Error(`not base32: ${ch}`);
    value = (value << 5) | index;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

/**
 * RFC 6238 TOTP (HMAC-SHA1, 30-second steps, 6 digits) with RFC 4226 §5.3 dynamic truncation,
 * computed here from the secret alone: the test never asks the server for a code.
 */
export function totp(secret: Buffer, at = Date.now(), step = 30, digits = 6): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(at / 1000 / step)));
  const mac = createHmac("sha1", secret).update(counter).digest();
  const offset = mac[mac.length - 1]! & 0x0f;
  const binary = mac.readUInt32BE(offset) & 0x7fffffff;
  return String(binary % 10 ** digits).padStart(digits, "0");
}

/** A 6-digit code that is valid in none of the steps a verifier may accept around now. */
export function wrongCode(secret: Buffer, at = Date.now()): string {
  const valid = new Set([-2, -1, 0, 1, 2].map((n) => totp(secret, at + n * 30_000)));
  for (let n = 0; ; n++) {
    const candidate = String((123456 + n * 7919) % 1_000_000).padStart(6, "0");
    if (!valid.has(candidate)) return candidate;
  }
}

/** The secret of an otpauth:// URI (Key Uri Format), decoded. */
export function secretOf(otpauthUri: string): Buffer {
  const secret = new URL(otpauthUri).searchParams.get("secret");
  if (!secret) throw new Error("otpauth URI without secret");
  return base32Decode(secret);
}
