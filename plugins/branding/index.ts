import type { BetterAuthPlugin } from "better-auth";
import { brandingSchema } from "./schema.js";

/**
 * Client branding: the table only (`npm run db:migrate` creates it). The HTTP surface is
 * routes/branding/branding.ts; it reads and writes through ./store.ts. The pages and the
 * e-mails of an authorization flow ask ./brand.ts for the brand in force.
 */
export function branding() {
  return {
    id: "client-branding",
    schema: brandingSchema,
  } satisfies BetterAuthPlugin;
}
