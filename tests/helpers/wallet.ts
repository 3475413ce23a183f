import { PrivateKey } from "@bsv/sdk";
import { expect } from "vitest";
import { newIdentity, registerIdentity, signRequest } from "./bap.js";
import { signUp } from "./oauth.js";
import type { TestServer } from "./server.js";

/** The path every wallet-connection token signs (routes/wallet/wallet.ts CONNECT_TOKEN_PATH). */
export const CONNECT = "/api/wallet/connect";

/** A wallet key of its own: what Yours or 1Sat would hold, and the address its ordinals sit at. */
export function newWallet() {
  const key = PrivateKey.fromRandom();
  return { key, pubkey: key.toPublicKey().toString(), address: key.toPublicKey().toAddress() as string };
}
export type Wallet = ReturnType<typeof newWallet>;

type TokenOptions = { scheme?: "bsm" | "brc77"; timestamp?: string; path?: string };

/**
 * The token a wallet produces for a connection: it signs the connect path and the body
 * `{"bapId":"<the identity it connects to>"}` (bitcoin-auth's `body`), so it connects to that
 * identity only.
 */
export const walletToken = (w: Wallet, bapId: string, opts: TokenOptions = {}) =>
  signRequest(w.key, opts.path ?? CONNECT, JSON.stringify({ bapId }), { scheme: opts.scheme ?? "bsm", timestamp: opts.timestamp });

/** The weaker token the published Sigma client documents: the connect path only, naming no identity. */
export const pathOnlyWalletToken = (w: Wallet, opts: TokenOptions = {}) =>
  signRequest(w.key, opts.path ?? CONNECT, undefined, { scheme: opts.scheme ?? "bsm", timestamp: opts.timestamp });

/** A signed-up person (API) with one registered BAP identity. */
export async function personWithIdentity(server: TestServer) {
  const person = await signUp(server);
  const id = newIdentity();
  expect((await registerIdentity(server, person.cookie, id)).status).toBe(201);
  return { ...person, id };
}
export type Person = Awaited<ReturnType<typeof personWithIdentity>>;

/** Connects a wallet to the person's identity through the API, as a wallet app does: a real Bitcoin-Auth token signed by the wallet's key. */
export async function connectWallet(server: TestServer, person: Person, provider = "yours", w: Wallet = newWallet()) {
  const res = await server.api(CONNECT, { cookie: person.cookie, body: { bapId: person.id.bapId, authToken: walletToken(w, person.id.bapId), provider } });
  expect(res.status).toBe(200);
  return w;
}
