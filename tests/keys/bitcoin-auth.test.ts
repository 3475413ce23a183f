import { BigNumber, Signature, Utils } from "@bsv/sdk";
import { beforeAll, describe, expect, it } from "vitest";
import { memoryReplayCache } from "../../lib/bitcoin-auth.js";
import { newIdentity, signRequest, type TestIdentity } from "../helpers/bap.js";
import { useTestServer } from "../helpers/fixtures.js";

const SIGN_IN = "/api/auth/sign-in/sigma";
const SIGN_UP = "/api/auth/sign-up/sigma";
const N = new BigNumber("fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141", 16);

const server = useTestServer();
let id: TestIdentity;
let body: string;

beforeAll(async () => {
  id = newIdentity();
  const enrolBody = JSON.stringify({ bapId: id.bapId, intent: "sign-up" });
  const enrolled = await server.api(SIGN_UP, {
    body: enrolBody,
    headers: { "x-auth-token": signRequest(id.key, SIGN_UP, enrolBody), "x-sigma-enrollment-proof": signRequest(id.key, SIGN_UP, enrolBody) },
  });
  expect(enrolled.status).toBe(200);
  body = JSON.stringify({ bapId: id.bapId });
});

const signIn = (token: string) => server.api(SIGN_IN, { body, headers: { "x-auth-token": token } });

/** The token with its signature field replaced. */
function withSignature(token: string, signature: number[]): string {
  const parts = token.split("|");
  parts[4] = Utils.toBase64(signature);
  return parts.join("|");
}
const signatureBytes = (token: string) => Utils.toArray(token.split("|")[4]!, "base64");

/**
 * Every other spelling of a BSM signature that ECDSA verification alone accepts: each of the
 * eight header bytes 27..34 (recovery id, compressed flag: not covered by the signature),
 * with s and with n - s. Fifteen besides the original.
 */
function bsmVariants(token: string): string[] {
  const bytes = signatureBytes(token);
  const sig = Signature.fromCompact(bytes);
  const highS = N.sub(sig.s).toArray("be", 32);
  const out: string[] = [];
  for (let header = 27; header <= 34; header++) {
    for (const s of [bytes.slice(33), highS]) {
      const variant = [header, ...bytes.slice(1, 33), ...s];
      if (Utils.toHex(variant) !== Utils.toHex(bytes)) out.push(withSignature(token, variant));
    }
  }
  return out;
}

/** A BRC-77 token with its DER signature's s replaced by n - s (high S), still valid ECDSA. */
function brc77HighS(token: string): string {
  const bytes = signatureBytes(token);
  const derStart = 4 + 33 + (bytes[37] === 0 ? 1 : 33) + 32;
  const sig = Signature.fromDER(bytes.slice(derStart));
  const high = new Signature(sig.r, N.sub(sig.s)).toDER() as number[];
  return withSignature(token, [...bytes.slice(0, derStart), ...high]);
}

/** A BSM token with high S and the header whose recovery id still recovers the signer (parity flipped). */
function bsmHighS(token: string): string {
  const bytes = signatureBytes(token);
  const sig = Signature.fromCompact(bytes);
  return withSignature(token, [((bytes[0]! - 31) ^ 1) + 31, ...bytes.slice(1, 33), ...N.sub(sig.s).toArray("be", 32)]);
}

describe("Bitcoin-Auth signature malleability", () => {
  it("refuses each of the 15 other spellings of a used BSM token", async () => {
    const token = signRequest(id.key, SIGN_IN, body, { scheme: "bsm" });
    expect((await signIn(token)).status).toBe(200);
    const variants = bsmVariants(token);
    expect(variants).toHaveLength(15);
    for (const [i, variant] of variants.entries()) {
      const res = await signIn(variant);
      expect(res.status, `variant ${i}`).toBe(401);
      expect(res.json.code, `variant ${i}`).toBe("INVALID_AUTH_TOKEN");
    }
  });

  it("refuses the high-S spelling of a used BRC-77 token", async () => {
    const token = signRequest(id.key, SIGN_IN, body);
    expect((await signIn(token)).status).toBe(200);
    const res = await signIn(brc77HighS(token));
    expect(res.status).toBe(401);
    expect(res.json.code).toBe("INVALID_AUTH_TOKEN");
  });

  it("refuses high-S signatures even the first time (BRC-77 and BSM)", async () => {
    for (const token of [brc77HighS(signRequest(id.key, SIGN_IN, body)), bsmHighS(signRequest(id.key, SIGN_IN, body, { scheme: "bsm" }))]) {
      const res = await signIn(token);
      expect(res.status, token.split("|")[1]).toBe(401);
    }
  });

  it("refuses a BSM header byte for an uncompressed key, or a recovery id that names another key, even the first time", async () => {
    const token = signRequest(id.key, SIGN_IN, body, { scheme: "bsm" });
    const bytes = signatureBytes(token);
    const uncompressed = withSignature(token, [bytes[0]! - 4, ...bytes.slice(1)]);
    const otherRecovery = withSignature(token, [((bytes[0]! - 31) ^ 1) + 31, ...bytes.slice(1)]);
    for (const variant of [uncompressed, otherRecovery]) expect((await signIn(variant)).status).toBe(401);
    // The canonical spelling of that same token is still good.
    expect((await signIn(token)).status).toBe(200);
  });

  it("refuses a second token over the same signed request, whatever its signature (BRC-77 signatures differ each time)", async () => {
    const timestamp = new Date().toISOString();
    const first = signRequest(id.key, SIGN_IN, body, { timestamp });
    const second = signRequest(id.key, SIGN_IN, body, { timestamp });
    expect(first).not.toBe(second);
    expect((await signIn(first)).status).toBe(200);
    expect((await signIn(second)).status).toBe(401);
  });
});

describe("the process-local replay cache", () => {
  it("refuses new claims when full of live records instead of forgetting a captured token", async () => {
    const cache = memoryReplayCache(100);
    expect(await cache.claim("captured", 60_000)).toBe(true);
    // A flood of fresh, valid claims from anyone.
    for (let i = 0; i < 500; i++) await cache.claim(`flood-${i}`, 60_000);
    expect(await cache.claim("captured", 60_000)).toBe(false);
  });

  it("makes room again once records expire", async () => {
    const cache = memoryReplayCache(10);
    for (let i = 0; i < 10; i++) expect(await cache.claim(`short-${i}`, 1)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await cache.claim("next", 60_000)).toBe(true);
  });
});
