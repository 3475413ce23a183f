import type { BetterAuthPluginDBSchema } from "@better-auth/core/db";

/**
 * A client's brand (Plus and Pro owners; docs/tiers.md "Branding"): the name, logo, accent
 * colour and support link the sign-in, consent and related pages and e-mails show when a person
 * arrives through that client. The logo is the image fetched once from the owner's https URL and
 * kept here, so no page ever loads a third-party image. Kept when the owner's tier lapses: it
 * shows again on their return.
 */
export const brandingSchema = {
  clientBranding: {
    fields: {
      /** The client's public client_id; one brand per client. */
      clientId: { type: "string", required: true, unique: true, references: { model: "oauthClient", field: "clientId", onDelete: "cascade" } },
      displayName: { type: "string", required: true },
      /** Where the owner's logo was fetched from (shown back by GET; never loaded by a page). */
      logoUri: { type: "string", required: false },
      /** `image/png`, `image/jpeg` or `image/webp`, as read from the image's own bytes. */
      logoType: { type: "string", required: false },
      /** The image, base64. */
      logoData: { type: "string", required: false },
      /** SHA-256 of the image (hex): the logo's ETag and the cache-busting part of its URL. */
      logoHash: { type: "string", required: false },
      /** `#rrggbb`, lower case. */
      accentColor: { type: "string", required: false },
      supportUrl: { type: "string", required: false },
      createdAt: { type: "date", required: true },
      updatedAt: { type: "date", required: true },
    },
  },
} satisfies BetterAuthPluginDBSchema;
