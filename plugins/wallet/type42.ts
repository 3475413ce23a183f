import { KeyDeriver, type WalletProtocol } from "@bsv/sdk";

/**
 * The client-derived Type-42 connection path (spec "Wallet"; BRC-42 key derivation, BRC-43
 * invoice numbers). The client holds the identity's member key and derives the wallet's key
 * from it for the "anyone" counterparty (the key 1·G), under an invoice number
 * `<level>-<protocol>-<keyID>` such as `2-sigma wallet-main`. With that counterparty the
 * derived *public* key can be computed by anyone from the identity's public key alone:
 * `identityPub.deriveChild(PrivateKey(1), invoice)`, which is what the sdk's
 * `KeyDeriver('anyone').derivePublicKey(protocolID, keyID, identityPub)` does. Its private key
 * is the member key plus an HMAC of public data, so only the member key's holder can sign
 * with it: a token signed by the derived key proves the wallet key belongs to that identity.
 */

/** BRC-43: security level 0..2, a protocol name, a key id (the sdk's KeyDeriver checks the rest). */
const INVOICE = /^([012])-([^-]*)-(.*)$/s;
// Printable, no control characters (the key id is shown on the account page and in logs).
const KEY_ID = /^[^\p{Cc}]{1,800}$/u;

export interface Type42Invoice {
  protocolID: WalletProtocol;
  keyID: string;
  /** The invoice number the key was derived under, canonical: `<level>-<protocol>-<keyID>`. */
  invoice: string;
}

/**
 * The invoice number as the sdk computes it, or null when it is not a valid BRC-43 one
 * (bad level or protocol name, key id empty, too long or with control characters). Only the
 * canonical spelling is accepted (the protocol name lower-case, single-spaced), so one key
 * has one invoice number here.
 */
export function type42Invoice(input: { invoice: string } | { protocolID: readonly [number, string]; keyID: string }): Type42Invoice | null {
  let level: number;
  let protocol: string;
  let keyID: string;
  if ("invoice" in input) {
    const m = INVOICE.exec(input.invoice);
    if (!m) return null;
    [level, protocol, keyID] = [Number(m[1]), m[2]!, m[3]!];
  } else {
    [level, protocol, keyID] = [input.protocolID[0], input.protocolID[1], input.keyID];
  }
  if (!(level === 0 || level === 1 || level === 2) || !KEY_ID.test(keyID)) return null;
  const protocolID: WalletProtocol = [level, protocol];
  const invoice = `${level}-${protocol}-${keyID}`;
  try {
    // Throws on every name the sdk refuses (length, characters, double spaces, "... protocol").
    new KeyDeriver("anyone").derivePublicKey(protocolID, keyID, derivationCheckKey);
  } catch {
    return null;
  }
  // The sdk lower-cases and trims the name; a name it would change is not canonical.
  if (protocol !== protocol.toLowerCase().trim()) return null;
  return { protocolID, keyID, invoice };
}

// Any valid point serves for the name check above (the generator itself, 1·G).
const derivationCheckKey = new KeyDeriver("anyone").identityKey;

/** The wallet key the identity key derives under `invoice` for the "anyone" counterparty (compressed hex). */
export function type42WalletKey(identityPubKey: string, invoice: Type42Invoice): string {
  return new KeyDeriver("anyone").derivePublicKey(invoice.protocolID, invoice.keyID, identityPubKey).toString();
}
