import type { BetterAuthPluginDBSchema } from "@better-auth/core/db";

/**
 * OauthClient columns the spec names beyond oauth-provider's: the registration extension
 * members `ownerBapId` and `memberPubkey`, and `public` / `type` (derived at registration
 * from the auth method and application type).
 */
export const memberKeySchema = {
  oauthClient: {
    fields: {
      ownerBapId: { type: "string", required: false },
      memberPubkey: { type: "string", required: false },
      public: { type: "boolean", required: false },
      type: { type: "string", required: false },
    },
  },
} satisfies BetterAuthPluginDBSchema;
