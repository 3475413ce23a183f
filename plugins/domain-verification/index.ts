import type { BetterAuthPlugin } from "better-auth";
import { domainVerificationSchema } from "./schema.js";

/**
 * Domain verification: the table only (`npm run db:migrate` creates it). The HTTP surface is
 * routes/domain-verifications/domain-verifications.ts; it reads and writes through ./store.ts and checks domains
 * through ./checks.ts. The consent page reads ./store.ts `verifiedClientHost`.
 */
export function domainVerification() {
  return {
    id: "domain-verification",
    schema: domainVerificationSchema,
  } satisfies BetterAuthPlugin;
}
