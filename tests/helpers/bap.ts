import { randomUUID } from "node:crypto";
import { PrivateKey, PublicKey } from "@bsv/sdk";
import type { TestServer } from "./server.js";
import { getAuthToken } from "bitcoin-auth";
import { bapIdFromPubkey } from "bsv-bap";

/** A fresh BAP identity: its member key, that key's pubkey and address, and the bapId they derive. */
export function newIdentity() {
  const key = PrivateKey.fromRandom();
  const pubkey = key.toPublicKey().toString();
  return { key, pubkey, bapId: bapIdFromPubkey(pubkey) as string, address: key.toPublicKey().toAddress() as string };
}
export type TestIdentity = ReturnType<typeof newIdentity>;

/** A Bitcoin-Auth token by `key` for `path` over `body` (brc77 unless told). */
export function signRequest(key: PrivateKey, path: string, body: string | undefined, opts: { timestamp?: string; scheme?: "brc77" | "bsm" } = {}) {
  return getAuthToken({ privateKeyWif: key.toWif(), requestPath: path, body, timestamp: opts.timestamp, scheme: opts.scheme });
}

const SIGN_IN = "/api/auth/sign-in/sigma";
const SIGN_UP = "/api/auth/sign-up/sigma";

/** POST /sign-up/sigma: a new key-only account, with both proofs by the member key. */
export function enrolKey(server: TestServer, id: TestIdentity) {
  const body = JSON.stringify({ bapId: id.bapId, intent: "sign-up" });
  const token = () => signRequest(id.key, SIGN_UP, body);
  return server.api(SIGN_UP, { body, headers: { "x-auth-token": token(), "x-sigma-enrollment-proof": token() } });
}

/** POST /sign-in/sigma as the identity's member key. */
export function keySignIn(server: TestServer, id: TestIdentity) {
  const body = JSON.stringify({ bapId: id.bapId });
  return server.api(SIGN_IN, { body, headers: { "x-auth-token": signRequest(id.key, SIGN_IN, body) } });
}

/** POST /api/user/bap-ids: registers the identity to the signed-in account, signed by its member key. */
export function registerIdentity(server: TestServer, cookie: string, id: TestIdentity, extra: Record<string, unknown> = {}) {
  const body = JSON.stringify({ bapId: id.bapId, ...extra });
  return server.api("/api/user/bap-ids", { cookie, body, headers: { "x-auth-token": signRequest(id.key, "/api/user/bap-ids", body) } });
}

/**
 * Writes a registration record straight into the table, the way the profile routes would
 * store it: for identities those routes cannot make (a member key that does not derive the bapId).
 */
export async function recordIdentity(server: TestServer, userId: string, record: { bapId: string; memberPubkey: string; primary?: boolean; createdAt?: Date }) {
  const createdAt = record.createdAt ?? new Date();
  const address = PublicKey.fromString(record.memberPubkey).toAddress();
  await server.db
    .insertInto("bapIdentity")
    .values({
      id: randomUUID(),
      userId,
      bapId: record.bapId,
      rootAddress: address,
      currentAddress: address,
      memberPubkey: record.memberPubkey,
      identity: JSON.stringify({ alternateName: "tester" }),
      isPrimary: Boolean(record.primary),
      createdAt,
      updatedAt: createdAt,
    })
    .execute();
}
