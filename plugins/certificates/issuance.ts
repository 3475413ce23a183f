import { Certificate, createNonce, MasterCertificate, Utils, verifyNonce, type ProtoWallet } from "@bsv/sdk";
import type { Kysely } from "kysely";
import { problem } from "../../lib/errors.js";
import { asWalletInterface } from "../../lib/mutual-auth.js";
import { PROBLEM_CODES } from "../../lib/problem-codes.js";
import { findBinding } from "./binding-store.js";
import type { RevocationChain } from "./revocation.js";
import { recordCertificate } from "./store.js";
import type { Database } from "../../lib/db/tables.js";

/**
 * BRC-52 issuance (the certifier's side of `acquireCertificate` with the `issuance` protocol):
 *
 *   1. the client nonce was made by the subject for us (BRC-52: createNonce(wallet, certifier));
 *   2. we make a server nonce for the subject;
 *   3. the serial number is our HMAC over both nonces, so the subject can check we used its nonce;
 *   4. the fields are decrypted through the master keyring (we are the counterparty);
 *   5. the type's policy checks that the clear values are true of the subject;
 *   6. a funded revocation outpoint is named, the certificate signed and recorded.
 *
 * The subject is the mutually authenticated peer, never a value in the request.
 */

/** The certificate types this server can attest, by type ID (Base64, from the catalog). */
export interface IssuableType {
  /** The catalog key (`bapWalletBinding`). */
  key: string;
  /** Exactly these fields, no more, no fewer. */
  fields: readonly string[];
  /** Why the values cannot be attested for this subject, or null when they can. */
  refuse(db: Kysely<Database>, subject: string, values: Record<string, string>): Promise<string | null>;
}

/**
 * The catalog's type IDs of the types we can attest. The catalog (plugins/certificates/catalog.ts,
 * elsewhere) owns the IDs; until it is wired in, none are configured and nothing is issuable.
 */
export interface CertificateTypeIds {
  bapWalletBinding?: string;
}

/** bapWalletBinding: the identity is bound, now, to the subject's key, verified at the stated time. */
const bapWalletBinding: IssuableType = {
  key: "bapWalletBinding",
  fields: ["bapId", "verifiedAt"],
  async refuse(db, subject, { bapId, verifiedAt }) {
    const binding = await findBinding(db, bapId!);
    if (!binding?.verifiedAt || binding.identityKey !== subject) return "That BAP identity is not bound to your wallet key (POST /api/certificates/wallet-binding/verify).";
    if (binding.verifiedAt.toISOString() !== verifiedAt) return `verifiedAt must be the binding's verification time, ${binding.verifiedAt.toISOString()}.`;
    return null;
  },
};

export function issuableTypes(ids: CertificateTypeIds): ReadonlyMap<string, IssuableType> {
  return new Map(ids.bapWalletBinding ? [[ids.bapWalletBinding, bapWalletBinding]] : []);
}

export interface SigningRequest {
  clientNonce: string;
  type: string;
  /** Encrypted field values, by name (MasterCertificate.createCertificateFields). */
  fields: Record<string, string>;
  /** Field keys encrypted for us. */
  masterKeyring: Record<string, string>;
}

export interface IssuanceDeps {
  db: Kysely<Database>;
  wallet: ProtoWallet;
  certifier: string;
  types: ReadonlyMap<string, IssuableType>;
  chain: RevocationChain;
}

export async function issueCertificate({ db, wallet, certifier, types, chain }: IssuanceDeps, subject: string, request: SigningRequest) {
  const type = types.get(request.type);
  if (!type) throw problem(PROBLEM_CODES.CERTIFICATE_TYPE_NOT_ISSUED);
  const names = Object.keys(request.fields).sort();
  if (names.join() !== [...type.fields].sort().join() || Object.keys(request.masterKeyring).sort().join() !== names.join()) {
    throw problem(PROBLEM_CODES.CERTIFICATE_FIELDS_REFUSED, { detail: `A ${type.key} certificate has exactly the fields ${type.fields.join(", ")}, each with a keyring entry.` });
  }
  const walletInterface = asWalletInterface(wallet);
  if (!(await verifyNonce(request.clientNonce, walletInterface, subject).catch(() => false))) throw problem(PROBLEM_CODES.INVALID_CLIENT_NONCE);
  const serverNonce = await createNonce(walletInterface, subject);
  const { hmac } = await wallet.createHmac({
    data: Utils.toArray(request.clientNonce + serverNonce, "base64"),
    protocolID: [2, "certificate issuance"],
    keyID: serverNonce + request.clientNonce,
    counterparty: subject,
  });
  const serialNumber = Utils.toBase64(hmac);
  const values = await MasterCertificate.decryptFields(wallet, request.masterKeyring, request.fields, subject).catch(() => {
    throw problem(PROBLEM_CODES.CERTIFICATE_FIELDS_REFUSED, { detail: "The fields could not be decrypted with the master keyring." });
  });
  const reason = await type.refuse(db, subject, values);
  if (reason) throw problem(PROBLEM_CODES.CERTIFICATE_FIELDS_REFUSED, { detail: reason });
  const revocationOutpoint = await chain.fundOutpoint(serialNumber);
  const certificate = new Certificate(request.type, serialNumber, subject, certifier, revocationOutpoint, request.fields);
  await certificate.sign(wallet);
  await recordCertificate(db, { serialNumber, type: request.type, subject, certifier, revocationOutpoint, fields: request.fields, signature: certificate.signature! });
  return { certificate, serverNonce };
}
