import type { BetterAuthPluginDBSchema } from "@better-auth/core/db";

/** OauthClient extension members: the spec's `ownerBapId` and `memberPubkey`. */
export const memberKeySchema = {
  oauthClient: {
    fields: {
      ownerBapId: { type: "string", required: false },
      memberPubkey: { type: "string", required: false },
    },
  },
} satisfies BetterAuthPluginDBSchema;
