import type { BetterAuthPlugin } from "better-auth";
import { certificatesSchema } from "./schema.js";

/**
 * Certificates: the tables only (`npm run db:migrate` creates them). The HTTP surface is
 * routes/certificates/certificates.ts and routes/certificates/wallet-binding.ts; issuance (BRC-52) is ./issuance.ts,
 * revocation ./revocation.ts, persistence ./store.ts and ./binding-store.ts; eligibility is
 * routes/certificates/eligibility.ts.
 */
export function certificates() {
  return {
    id: "certificates",
    schema: certificatesSchema,
  } satisfies BetterAuthPlugin;
}
