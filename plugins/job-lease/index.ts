import type { BetterAuthPlugin } from "better-auth";
import { jobLeaseSchema } from "./schema.js";

/**
 * Contributes the `jobLease` table to the code's schema (so `npm run db:generate` and the
 * start-up schema check know it). The leases themselves are taken through ./store.ts by the
 * background jobs server.ts starts (plugins/audit/retention.ts).
 */
export function jobLeases() {
  return { id: "job-lease", schema: jobLeaseSchema } satisfies BetterAuthPlugin;
}
