import { createHash, randomUUID } from "node:crypto";
import { PrivateKey } from "@bsv/sdk";
import { base64url, calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type JWK } from "jose";

/** A DPoP proof key (RFC 9449 §4.2): its public JWK, its algorithm, and a signer of compact JWS. */
export interface ProofKey {
  alg: "ES256" | "EdDSA" | "ES256K";
  jwk: JWK;
  sign(header: Record<string, unknown>, payload: Record<string, unknown>): Promise<string>;
}

const b64 = (value: unknown) => base64url.encode(JSON.stringify(value));

/**
 * ES256K (RFC 8812 §3.2) with a Bitcoin key from @bsv/sdk: jose cannot sign it, so the JWS is
 * built by hand, the signature r || s (RFC 7518 §3.4) over SHA-256 of the signing input.
 */
export function bitcoinKey(priv: PrivateKey = PrivateKey.fromRandom()) {
  const pub = priv.toPublicKey();
  const coord = (n: { toArray(e: "be", l: number): number[] }) => Buffer.from(n.toArray("be", 32)).toString("base64url");
  const jwk: JWK = { kty: "EC", crv: "secp256k1", x: coord(pub.getX()), y: coord(pub.getY()) };
  return {
    alg: "ES256K" as const,
    jwk,
    priv,
    async sign(header: Record<string, unknown>, payload: Record<string, unknown>) {
      const input = `${b64({ ...header, alg: "ES256K" })}.${b64(payload)}`;
      const sig = priv.sign(Array.from(Buffer.from(input)));
      const raw = Buffer.concat([Buffer.from(sig.r.toArray("be", 32)), Buffer.from(sig.s.toArray("be", 32))]);
      return `${input}.${raw.toString("base64url")}`;
    },
  };
}

/** A fresh proof key: ES256 and EdDSA through jose, ES256K from a Bitcoin key. */
export async function proofKey(alg: ProofKey["alg"]): Promise<ProofKey> {
  if (alg === "ES256K") return bitcoinKey();
  const { privateKey, publicKey } = await generateKeyPair(alg, { crv: alg === "EdDSA" ? "Ed25519" : undefined });
  const jwk = await exportJWK(publicKey);
  return {
    alg,
    jwk,
    sign: (header, payload) => new SignJWT(payload).setProtectedHeader({ ...header, alg } as never).sign(privateKey),
  };
}

export const thumbprint = (key: { jwk: JWK }) => calculateJwkThumbprint(key.jwk, "sha256");

/** RFC 9449 §4.2 `ath`: base64url SHA-256 of the access token. */
export const ath = (accessToken: string) => createHash("sha256").update(accessToken).digest("base64url");

/** A DPoP proof JWT (RFC 9449 §4.2) for one request; `claims` overrides or adds (iat, jti, ath, nonce). */
export function proof(key: ProofKey, htm: string, htu: string, claims: Record<string, unknown> = {}, header: Record<string, unknown> = {}) {
  return key.sign({ typ: "dpop+jwt", jwk: key.jwk, ...header }, { htm, htu, iat: Math.floor(Date.now() / 1000), jti: randomUUID(), ...claims });
}

/** The payload of a JWT, unverified: for a test reading what the server put in its own token. */
export function claimsOf(jwt: string): Record<string, any> {
  return JSON.parse(Buffer.from(jwt.split(".")[1] ?? "", "base64url").toString("utf8"));
}

/** The server's current DPoP nonce, as a client learns it (RFC 9449 §8): from a token request's DPoP-Nonce header. */
export async function serverNonce(server: { url: string }): Promise<string> {
  const url = `${server.url}/api/auth/oauth2/token`;
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", dpop: await proof(await proofKey("ES256"), "POST", url) },
    body: "grant_type=refresh_token&refresh_token=none&client_id=none",
  });
  await res.body?.cancel();
  const nonce = res.headers.get("dpop-nonce");
  if (!nonce) throw new Error(`no DPoP-Nonce from ${url}: ${res.status}`);
  return nonce;
}
