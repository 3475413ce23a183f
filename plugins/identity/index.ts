import type { BetterAuthPlugin } from "better-auth";
import { identitySchema } from "./schema.js";

/** Adds the spec's User fields (pubkey, subscriptionTier, onboarding_completed) and BAP identities. */
export function identity() {
  return {
    id: "bap-identity",
    schema: identitySchema,
  } satisfies BetterAuthPlugin;
}
