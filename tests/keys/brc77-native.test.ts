import { PrivateKey, PublicKey, SignedMessage, Utils } from "@bsv/sdk";
import { getAuthToken } from "bitcoin-auth";
import { describe, expect, it } from "vitest";
import { uncompressedPoint, verifyBrc77ForAnyone } from "../../lib/brc77.js";
import { isCompressedPubkey, memoryReplayCache, verifyBitcoinAuthToken } from "../../lib/bitcoin-auth.js";

/** @bsv/sdk's own answer: the verifier lib/brc77.ts stands in for. */
function sdkVerifies(message: string, signature: number[]): boolean {
  try {
    return SignedMessage.verify(Utils.toArray(message, "utf8"), signature);
  } catch {
    return false;
  }
}

function flipped(bytes: number[], at: number): number[] {
  const copy = bytes.slice();
  copy[at] = copy[at]! ^ 1;
  return copy;
}

describe("BRC-77 on node:crypto (lib/brc77.ts)", () => {
  it("decides as @bsv/sdk does on valid, altered and foreign signatures", () => {
    let decided = 0;
    let accepted = 0;
    for (let i = 0; i < 60; i++) {
      const key = PrivateKey.fromRandom();
      const message = `/api/auth/sign-in/sigma|2026-11-26T12:00:0${i % 10}.000Z|${i % 3 ? "é✓" + i : ""}`;
      const signature = SignedMessage.sign(Utils.toArray(message, "utf8"), key);
      const other = SignedMessage.sign(Utils.toArray(message, "utf8"), PrivateKey.fromRandom());
      const cases: [string, number[]][] = [
        [message, signature],
        [message + " ", signature],
        [message, flipped(signature, signature.length - 3)], // s
        [message, flipped(signature, 75)], // r
        [message, flipped(signature, 40)], // key ID
        [message, flipped(signature, 20)], // signer
        [message, flipped(signature, 0)], // version
        [message, [...signature.slice(0, 4), ...other.slice(4, 37), ...signature.slice(37)]], // another signer
        [message, signature.slice(0, 60)],
      ];
      for (const [text, bytes] of cases) {
        const native = verifyBrc77ForAnyone(text, Uint8Array.from(bytes));
        if (native === undefined) continue;
        decided++;
        if (native) accepted++;
        expect(native, `case of round ${i}`).toBe(sdkVerifies(text, bytes));
      }
    }
    // Every round's own signature verifies; the rest are refused; the native path decided them all.
    expect(accepted).toBe(60);
    expect(decided).toBe(60 * 9);
  });

  it("refuses a signature made for a named recipient", () => {
    const key = PrivateKey.fromRandom();
    const recipient = PrivateKey.fromRandom().toPublicKey();
    const signature = SignedMessage.sign(Utils.toArray("m", "utf8"), key, recipient);
    expect(verifyBrc77ForAnyone("m", Uint8Array.from(signature))).toBe(false);
  });

  it("knows a compressed point from bytes that are not one", () => {
    const pubkey = PrivateKey.fromRandom().toPublicKey();
    const bytes = Uint8Array.from(pubkey.encode(true) as number[]);
    const point = uncompressedPoint(bytes);
    expect(point?.toString("hex")).toBe(Utils.toHex(pubkey.encode(false) as number[]));
    // x = 5 has no y on secp256k1 (5³ + 7 = 132 is not a square mod p).
    const offCurve = "02" + "0".repeat(63) + "5";
    expect(() => PublicKey.fromString(offCurve)).toThrow();
    expect(uncompressedPoint(Buffer.from(offCurve, "hex"))).toBeNull();
    expect(isCompressedPubkey(offCurve)).toBe(false);
    expect(isCompressedPubkey(pubkey.toString())).toBe(true);
    // x = p + 1 is not a field element: @bsv/sdk reads it as x = 1 (a point), here it is refused,
    // so one point has one spelling. A 04 prefix is refused too.
    const pPlusOne = "02" + "ff".repeat(27) + "fefffffc30";
    expect(PublicKey.fromString(pPlusOne).encode(true, "hex")).toBe("02" + "0".repeat(63) + "1");
    expect(uncompressedPoint(Buffer.from(pPlusOne, "hex"))).toBeNull();
    expect(isCompressedPubkey(pPlusOne)).toBe(false);
    expect(uncompressedPoint(Buffer.from("04" + pubkey.toString().slice(2), "hex"))).toBeNull();
  });

  it("is what verifyBitcoinAuthToken accepts, body and all", async () => {
    const key = PrivateKey.fromRandom();
    const policy = { replay: memoryReplayCache() };
    const body = JSON.stringify({ note: "naïve ✓" });
    const token = getAuthToken({ privateKeyWif: key.toWif(), requestPath: "/api/backup/sync", body });
    expect(await verifyBitcoinAuthToken(token, { requestPath: "/api/backup/sync", body: body + " " }, policy)).toEqual({ ok: false, reason: "bad signature" });
    const ok = await verifyBitcoinAuthToken(token, { requestPath: "/api/backup/sync", body }, policy);
    expect(ok).toMatchObject({ ok: true, pubkey: key.toPublicKey().toString(), scheme: "brc77" });
    // BSM still verifies (on bitcoin-auth's own verifier).
    const bsm = getAuthToken({ privateKeyWif: key.toWif(), requestPath: "/api/backup/sync", body, scheme: "bsm" });
    expect(await verifyBitcoinAuthToken(bsm, { requestPath: "/api/backup/sync", body }, policy)).toMatchObject({ ok: true, scheme: "bsm" });
  });
});
