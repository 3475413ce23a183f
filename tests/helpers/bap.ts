import { PrivateKey } from "@bsv/sdk";
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
