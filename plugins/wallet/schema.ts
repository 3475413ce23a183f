import type { BetterAuthPluginDBSchema } from "@better-auth/core/db";

/**
 * Wallet connections (spec "Wallet"): which wallet addresses a user has proven control of, and
 * for which of their BAP identities. A connection is an association only: removing it touches
 * nothing on chain, and no key is ever stored (the pubkey is public).
 */
export const walletSchema = {
  walletConnection: {
    fields: {
      userId: { type: "string", required: true, references: { model: "user", field: "id", onDelete: "cascade" }, index: true },
      bapId: { type: "string", required: true, index: true },
      /**
       * `bapId|address`: one connection of an address per identity. better-auth declares
       * uniqueness per column only, so the pair is kept in one column the database enforces.
       */
      bapAddress: { type: "string", required: true, unique: true },
      /** The address the proving key controls (where its ordinals are held). */
      address: { type: "string", required: true, index: true },
      /** The key that signed the connection (compressed secp256k1 hex, or an EVM address). */
      pubkey: { type: "string", required: true },
      /** The wallet that made the proof, as the client names it (`yours`, `1sat`, `handcash`...). */
      provider: { type: "string", required: true },
      /**
       * How control was proven: `bitcoin-auth` (a token signed by the wallet key), `evm` (a signed
       * challenge) or `type42` (a token signed by a key the identity's member key derives).
       */
      connectionMethod: { type: "string", required: true },
      /**
       * The identity key the wallet reported, when it reported one: user-supplied and unverified,
       * except for `type42` connections (the member key the wallet key was derived from).
       */
      identityPubkey: { type: "string", required: false },
      /** Where payments to this wallet go (a wallet's funding address differs from its ordinals address). */
      paymentAddress: { type: "string", required: false },
      /** The identity's wallet for receiving NFTs: one per identity. */
      isPrimary: { type: "boolean", required: true, defaultValue: false },
      /** The identity's wallet for payments: one per identity, `yours` or `1sat` only. */
      isPayment: { type: "boolean", required: true, defaultValue: false },
      connectedAt: { type: "date", required: true },
      /** When control was last proven (a reconnect proves it again). */
      lastVerified: { type: "date", required: true },
    },
  },
} satisfies BetterAuthPluginDBSchema;
