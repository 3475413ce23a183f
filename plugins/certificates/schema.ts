import type { BetterAuthPluginDBSchema } from "@better-auth/core/db";

/**
 * BRC-52 certificates this server issued, with their revocation progress, and the wallet
 * bindings of BAP identities (the facts a `bapWalletBinding` certificate attests). Field values
 * are stored as issued: encrypted for the subject, never in clear.
 */
export const certificatesSchema = {
  issuedCertificate: {
    fields: {
      /** Base64 HMAC of the two issuance nonces (BRC-52). */
      serialNumber: { type: "string", required: true, unique: true },
      type: { type: "string", required: true },
      /** The subject's identity key: the mutually authenticated peer that asked. */
      subject: { type: "string", required: true, index: true },
      certifier: { type: "string", required: true },
      revocationOutpoint: { type: "string", required: true },
      /** The encrypted fields, as JSON. */
      fields: { type: "string", required: true },
      signature: { type: "string", required: true },
      issuedAt: { type: "date", required: true },
      /** `prepared` -> `broadcast` -> `observed` -> `confirmed`; unset while not revoked. */
      revocationState: { type: "string", required: false },
      /** The transaction spending revocationOutpoint, once broadcast. */
      revocationTxid: { type: "string", required: false },
      revocationUpdatedAt: { type: "date", required: false },
    },
  },
  bapWalletBinding: {
    fields: {
      /** One binding per BAP identity. */
      bapId: { type: "string", required: true, unique: true },
      userId: { type: "string", required: true, references: { model: "user", field: "id", onDelete: "cascade" }, index: true },
      /** The wallet identity key a challenge is out for, then the one that signed it. */
      identityKey: { type: "string", required: true, index: true },
      /** The open challenge (single use), and until when it may be signed. */
      challenge: { type: "string", required: false },
      challengeExpiresAt: { type: "date", required: false },
      /** When the wallet signed a challenge; unset while unverified or after revocation. */
      verifiedAt: { type: "date", required: false },
    },
  },
} satisfies BetterAuthPluginDBSchema;
