import type { BetterAuthPluginDBSchema } from "@better-auth/core/db";

/**
 * What a person granted with RFC 9396 `authorization_details`, one row per authorization code
 * that carried them (plugins/oauth-store/authorization-details.ts). The row's id is the code's
 * stored identifier, which oauth-provider keeps on every refresh token of that grant
 * (`authorizationCodeId`): refreshed access tokens carry the same details.
 */
export const authorizationDetailsSchema = {
  oauthAuthorizationDetails: {
    fields: {
      userId: { type: "string", required: true, references: { model: "user", field: "id", onDelete: "cascade" }, index: true },
      clientId: { type: "string", required: true },
      /** The validated `authorization_details` array, as JSON. */
      details: { type: "string", required: true },
      createdAt: { type: "date", required: true },
    },
  },
} satisfies BetterAuthPluginDBSchema;
