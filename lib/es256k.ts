import { createPublicKey, verify } from "node:crypto";
import { base64url, decodeProtectedHeader, type JWK, type JWTPayload } from "jose";

/**
 * ES256K (RFC 8812 §3.2): ECDSA over secp256k1 with SHA-256, the curve of Bitcoin keys. jose 6
 * verifies only what WebCrypto knows, and WebCrypto has no secp256k1, so node:crypto verifies
 * it here; jose still decodes the header. The dependency calls this for proofs and assertions
 * whose `alg` is ES256K (patches/README.md, core-jws-verifiers).
 */
export const ES256K = "ES256K";

const SIGNATURE_BYTES = 64; // RFC 7518 §3.4: R || S, 32 octets each for a 256-bit curve

/** The public key of a secp256k1 JWK, or an error; a JWK carrying `d` is refused (RFC 9449 §4.2). */
function publicKeyOf(jwk: JWK) {
  if (jwk.kty !== "EC" || jwk.crv !== "secp256k1" || typeof jwk.x !== "string" || typeof jwk.y !== "string" || "d" in jwk) {
    throw new Error("ES256K needs a public EC JWK on secp256k1");
  }
  return createPublicKey({ key: { kty: "EC", crv: "secp256k1", x: jwk.x, y: jwk.y }, format: "jwk" });
}

/** Verifies a compact JWS signed with ES256K by `jwk` and returns its JSON payload; throws otherwise. */
export function verifyEs256kJws(compact: string, jwk: JWK): JWTPayload {
  const parts = compact.split(".");
  if (parts.length !== 3) throw new Error("not a compact JWS");
  const [header, payload, signature] = parts as [string, string, string];
  if (decodeProtectedHeader(compact).alg !== ES256K) throw new Error("alg is not ES256K");
  const sig = base64url.decode(signature);
  if (sig.length !== SIGNATURE_BYTES) throw new Error("ES256K signature must be 64 octets");
  const ok = verify("sha256", Buffer.from(`${header}.${payload}`), { key: publicKeyOf(jwk), dsaEncoding: "ieee-p1363" }, sig);
  if (!ok) throw new Error("signature verification failed");
  let claims: unknown;
  try {
    claims = JSON.parse(new TextDecoder().decode(base64url.decode(payload)));
  } catch {
    throw new Error("JWS payload is not JSON");
  }
  if (!claims || typeof claims !== "object" || Array.isArray(claims)) throw new Error("JWS payload is not a JSON object");
  return claims as JWTPayload;
}
