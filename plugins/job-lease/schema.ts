import type { BetterAuthPluginDBSchema } from "@better-auth/core/db";

/**
 * Leases of background jobs that one instance at a time may run (./store.ts). The row's `id`
 * is the job's name; it is taken by an instance (`holder`) until `expiresAt`.
 */
export const jobLeaseSchema = {
  jobLease: {
    fields: {
      /** Which instance runs the job: host, process and a random part (./store.ts leaseHolder). */
      holder: { type: "string", required: true },
      /** Until when; an expired lease may be taken by anyone. */
      expiresAt: { type: "date", required: true },
    },
  },
} satisfies BetterAuthPluginDBSchema;
