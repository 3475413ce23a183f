import { PrivateKey } from "@bsv/sdk";
import { signRequest } from "./bap.js";

/** The path every wallet-connection token names (routes/wallet.ts CONNECT_TOKEN_PATH). */
export const CONNECT = "/api/wallet/connect";

/** A wallet key of its own: what Yours or 1Sat would hold, and the address its ordinals sit at. */
export function newWallet() {
  const key = PrivateKey.fromRandom();
  return { key, pubkey: key.toPublicKey().toString(), address: key.toPublicKey().toAddress() as string };
}
export type Wallet = ReturnType<typeof newWallet>;

/** The token a wallet produces for a connection: it signs the connect path, no body. */
export const walletToken = (w: Wallet, opts: { scheme?: "bsm" | "brc77"; timestamp?: string; path?: string } = {}) =>
  signRequest(w.key, opts.path ?? CONNECT, undefined, { scheme: opts.scheme ?? "bsm", timestamp: opts.timestamp });
