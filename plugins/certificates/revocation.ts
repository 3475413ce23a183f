import type { Kysely } from "kysely";
import { findCertificate, moveRevocation, type IssuedCertificate } from "./store.js";
import type { Database } from "../../lib/db/tables.js";

/**
 * The chain side of BRC-52 revocation: each certificate names a funded outpoint, and spending
 * it revokes the certificate. With CERTIFICATE_FUNDING_KEY set the chain is ARC's
 * (plugins/certificates/arc-chain.ts); without it the service runs with `NO_REVOCATION_CHAIN`,
 * under which revocation stops at `prepared` and issuance is refused.
 */
export interface RevocationChain {
  /** False while no broadcaster is configured (the readiness answer says `disabled`). */
  readonly enabled: boolean;
  /** A funded outpoint (`txid.vout`) for a new certificate's revocationOutpoint. */
  fundOutpoint(serialNumber: string): Promise<string>;
  /** Broadcasts a spend of the outpoint; the spending transaction's id. */
  spend(outpoint: string): Promise<string>;
  /** The spend's confirmations: null while not seen, 0 in the mempool. */
  confirmations(txid: string): Promise<number | null>;
}

export class RevocationUnavailable extends Error {
  override name = "RevocationUnavailable";
}

/** The chain is configured but could not fund an outpoint now (no coins, the broadcaster refused or is unreachable). */
export class RevocationFundingFailed extends Error {
  override name = "RevocationFundingFailed";
}

export const NO_REVOCATION_CHAIN: RevocationChain = {
  enabled: false,
  fundOutpoint: () => Promise.reject(new RevocationUnavailable("no revocation broadcaster is configured")),
  spend: () => Promise.reject(new RevocationUnavailable("no revocation broadcaster is configured")),
  confirmations: () => Promise.resolve(null),
};

/**
 * One step of the policy progression (spec, "Certificate revocation"), as far as the chain
 * allows now: prepared -> broadcast (the spend is sent), broadcast -> observed (the spend is
 * seen: enough for a verifier to stop trusting the certificate), observed -> confirmed (at
 * `depth` confirmations: only then final). Each move is compare-and-set on the state read.
 */
export async function progressRevocation(db: Kysely<Database>, chain: RevocationChain, depth: number, cert: IssuedCertificate): Promise<IssuedCertificate> {
  const { serialNumber } = cert;
  if (!chain.enabled || cert.revocationState === null || cert.revocationState === "confirmed") return cert;
  if (cert.revocationState === "prepared") {
    const txid = await chain.spend(cert.revocationOutpoint);
    await moveRevocation(db, serialNumber, "prepared", "broadcast", txid);
    return (await findCertificate(db, serialNumber)) ?? cert;
  }
  const seen = await chain.confirmations(cert.revocationTxid!);
  if (seen === null) return cert;
  if (cert.revocationState === "broadcast") await moveRevocation(db, serialNumber, "broadcast", "observed");
  if (seen >= depth) await moveRevocation(db, serialNumber, "observed", "confirmed");
  return (await findCertificate(db, serialNumber)) ?? cert;
}

/** What a verifier should conclude from a certificate's revocation state. */
export function revocationView(cert: IssuedCertificate) {
  const state = cert.revocationState;
  return {
    state: state ?? "none",
    /** An observed spend is enough to stop trusting the certificate. */
    revoked: state === "observed" || state === "confirmed",
    /** Reported final only at the required depth. */
    final: state === "confirmed",
    txid: cert.revocationTxid,
    updatedAt: cert.revocationUpdatedAt?.toISOString() ?? null,
  };
}
