import { AuthFetch, PrivateKey, ProtoWallet, type WalletInterface } from "@bsv/sdk";

/**
 * A BRC-103 peer: @bsv/sdk's AuthFetch over a ProtoWallet (AuthFetch needs signatures, HMACs
 * and public keys, which a ProtoWallet has).
 */
export function peerClient(key = PrivateKey.fromRandom()) {
  const wallet = new ProtoWallet(key);
  return { key, identityKey: key.toPublicKey().toString(), client: new AuthFetch(wallet as unknown as WalletInterface) };
}

export type Peer = ReturnType<typeof peerClient>;
