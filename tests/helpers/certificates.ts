import { createNonce, MasterCertificate, ProtoWallet, Utils, type PrivateKey, type WalletInterface } from "@bsv/sdk";
import { expect } from "vitest";
import type { TestServer } from "./server.js";
import type { Person } from "./wallet.js";
import type { Peer } from "./mutual-auth.js";

export const WALLET_BINDING = "/api/certificates/wallet-binding";

/** The wallet side of BRC-52 issuance (what a wallet's acquireCertificate with `issuance` does), over AuthFetch. */
export async function requestCertificate(server: TestServer, peer: Peer, certifier: string, type: string, fields: Record<string, string>, overrides: Record<string, unknown> = {}) {
  const wallet = new ProtoWallet(peer.key);
  const clientNonce = await createNonce(wallet as unknown as WalletInterface, certifier);
  const { certificateFields, masterKeyring } = await MasterCertificate.createCertificateFields(wallet, certifier, fields);
  const res = await peer.client.fetch(`${server.url}/api/certificates/signCertificate`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ clientNonce, type, fields: certificateFields, masterKeyring, ...overrides }),
  });
  return { res, json: await res.json(), clientNonce, wallet, masterKeyring, certificateFields };
}

/** Binds the peer's identity key to the person's BAP identity through the wallet-binding routes. */
export async function bindWallet(server: TestServer, person: Person, key: PrivateKey) {
  const identityKey = key.toPublicKey().toString();
  const challenge = await server.api(`${WALLET_BINDING}/challenge`, { cookie: person.cookie, body: { bapId: person.id.bapId, identityKey } });
  expect(challenge.status).toBe(200);
  const { signature } = await new ProtoWallet(key).createSignature({ data: Utils.toArray(challenge.json.challenge, "utf8"), protocolID: challenge.json.protocolID, keyID: challenge.json.keyID, counterparty: "anyone" });
  const verified = await server.api(`${WALLET_BINDING}/verify`, { cookie: person.cookie, body: { bapId: person.id.bapId, signature: Utils.toHex(signature) } });
  expect(verified.status).toBe(200);
  return verified.json as { bapId: string; identityKey: string; verifiedAt: string };
}
