import { createECDH, createHmac, createPublicKey, ECDH, verify } from "node:crypto";
import { Signature } from "@bsv/sdk";

/**
 * BRC-77 message signatures for "anyone" (the form Bitcoin-Auth tokens use), verified on
 * node:crypto's native secp256k1 instead of @bsv/sdk's JavaScript point arithmetic: the same
 * decision in about a third of the time (0.66 ms against 2.1 ms: the JavaScript path spends it
 * in constant-time point multiplications on the event loop; docs/benchmarks.md, "Soak").
 *
 * BRC-77 (as @bsv/sdk's SignedMessage.verify does it): the signature is
 * `version 42423301 | signer (33) | recipient (0 = anyone, else 33 bytes) | keyID (32) | DER`.
 * The signing key is the signer's BRC-42 child for the invoice
 * `2-message signing-<base64 keyID>`: with "anyone" (private key 1) the shared secret is the
 * signer's own point, so the child is `S + h·G` with `h = HMAC-SHA256(key: S compressed,
 * invoice)`. The signature is ECDSA over SHA-256 of the message under that child.
 *
 * Here `h·G` is node:crypto's ECDH public key for the private key `h`, one point addition in
 * BigInt gives the child, and node:crypto verifies the ECDSA signature. A case this path does
 * not take (h is not a valid private key, or `S` and `h·G` share an x coordinate: both about
 * 2^-128) answers `undefined`, and the caller asks @bsv/sdk (tests/keys/brc77-native.test.ts
 * compares both on valid, altered and foreign signatures).
 */

const P = 0xfffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2fn;
const VERSION = [0x42, 0x42, 0x33, 0x01];
/** SubjectPublicKeyInfo of an uncompressed secp256k1 point, up to the point's 65 bytes. */
const SPKI_PREFIX = Buffer.from("3056301006072a8648ce3d020106052b8104000a034200", "hex");

const toBig = (bytes: Uint8Array) => BigInt("0x" + Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex"));
const to32 = (n: bigint) => Buffer.from(n.toString(16).padStart(64, "0"), "hex");
const mod = (n: bigint) => {
  const r = n % P;
  return r < 0n ? r + P : r;
};

/** a⁻¹ mod P (P prime, a not 0 mod P): the extended Euclidean algorithm. */
function inverse(a: bigint): bigint {
  let [r0, r1] = [mod(a), P];
  let [s0, s1] = [1n, 0n];
  while (r1 !== 0n) {
    const q = r0 / r1;
    [r0, r1] = [r1, r0 - q * r1];
    [s0, s1] = [s1, s0 - q * s1];
  }
  return mod(s0);
}

type Bytes = Uint8Array | number[];

/**
 * The fields of BRC-77 signature bytes: version (4) | signer (33) | recipient (one 0 byte for
 * anyone, else 33) | keyID (32) | DER signature; null when too short to hold them.
 */
export function brc77Parts<T extends Bytes>(bytes: T): { version: T; signer: T; anyone: boolean; keyId: T; der: T } | null {
  if (bytes.length < 4 + 33 + 1 + 32 + 8) return null;
  const anyone = bytes[37] === 0;
  const keyAt = 37 + (anyone ? 1 : 33);
  const slice = (from: number, to?: number) => bytes.slice(from, to) as T;
  return { version: slice(0, 4), signer: slice(4, 37), anyone, keyId: slice(keyAt, keyAt + 32), der: slice(keyAt + 32) };
}

/** The uncompressed point (65 bytes) of a compressed secp256k1 key, or null when it is not one. */
export function uncompressedPoint(compressed: Bytes): Buffer | null {
  if (compressed.length !== 33 || (compressed[0] !== 2 && compressed[0] !== 3)) return null;
  try {
    return ECDH.convertKey(Buffer.from(compressed), "secp256k1", undefined, undefined, "uncompressed") as Buffer;
  } catch {
    return null;
  }
}

/**
 * Whether `signature` (BRC-77 bytes) signs `message` (its UTF-8) for anyone; false for a
 * signature to a named recipient (no private key here can verify one), undefined when this path
 * cannot decide (see above).
 */
export function verifyBrc77ForAnyone(message: string, signature: Bytes): boolean | undefined {
  const parts = brc77Parts(signature);
  if (!parts || !parts.anyone || VERSION.some((byte, i) => parts.version[i] !== byte)) return false;
  const signer = Buffer.from(parts.signer);
  const point = uncompressedPoint(signer);
  if (!point) return false;
  const keyId = Buffer.from(parts.keyId).toString("base64");
  let der: Buffer;
  try {
    // Parsed and written again, as @bsv/sdk reads it: whether the DER is canonical is the caller's check.
    der = Buffer.from(Signature.fromDER(Array.from(parts.der)).toDER() as number[]);
  } catch {
    return false;
  }

  const h = createHmac("sha256", signer).update(`2-message signing-${keyId}`, "utf8").digest();
  const ecdh = createECDH("secp256k1");
  try {
    ecdh.setPrivateKey(h);
  } catch {
    return undefined; // h is 0 or not below the group order
  }
  const hg = ecdh.getPublicKey();
  const [x1, y1] = [toBig(point.subarray(1, 33)), toBig(point.subarray(33, 65))];
  const [x2, y2] = [toBig(hg.subarray(1, 33)), toBig(hg.subarray(33, 65))];
  if (x1 === x2) return undefined; // a doubling or the point at infinity
  const slope = mod((y2 - y1) * inverse(x2 - x1));
  const x3 = mod(slope * slope - x1 - x2);
  const y3 = mod(slope * (x1 - x3) - y1);
  const child = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, Buffer.from([4]), to32(x3), to32(y3)]), format: "der", type: "spki" });
  return verify("sha256", Buffer.from(message, "utf8"), { key: child, dsaEncoding: "der" }, der);
}
