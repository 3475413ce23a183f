import type { BetterAuthPluginDBSchema } from "@better-auth/core/db";

/**
 * Domain verifications (spec "Certificates and domain verification"; the `verifiedDomain`
 * catalog entry's fields): a person proves control of a domain for one of their BAP profiles,
 * and optionally for one of their OAuth clients, by publishing a token in DNS or at a
 * well-known HTTPS address. The consent page marks a client verified only through these rows.
 */
export const domainVerificationSchema = {
  domainVerification: {
    fields: {
      userId: { type: "string", required: true, references: { model: "user", field: "id", onDelete: "cascade" }, index: true },
      bapId: { type: "string", required: true, index: true },
      /** Lower-case host name, no port, no trailing dot. */
      domain: { type: "string", required: true, index: true },
      /** `dns` (a TXT record) or `https` (a well-known file). */
      method: { type: "string", required: true },
      /** The random value the domain must publish. */
      token: { type: "string", required: true },
      /** The OAuth client (its public client_id) this domain speaks for, when the owner named one. */
      oauthClientId: { type: "string", required: false, index: true },
      /** `pending`, `verified` or `failed` as last decided; `expired` is read from the dates. */
      status: { type: "string", required: true },
      /** The challenge may be completed until then. */
      challengeExpiresAt: { type: "date", required: true },
      verifiedAt: { type: "date", required: false },
      /** A verification holds until then; after it the domain must be verified again. */
      expiresAt: { type: "date", required: false },
      lastCheckedAt: { type: "date", required: false },
      /** Why the last check failed, in words. */
      failureReason: { type: "string", required: false },
      createdAt: { type: "date", required: true },
    },
  },
} satisfies BetterAuthPluginDBSchema;
