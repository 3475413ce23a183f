import { BrandingInput } from "../../plugins/branding/service.js";
import { BAD_INPUT, jsonBody, jsonResponse, pathParameter, problemResponses, PUBLIC, SESSION, UNAUTHORIZED, type Paths } from "../components.js";

const CLIENT_ID = pathParameter("clientId", "The client's public client_id.");
const strOrNull = { type: ["string", "null"] };
/** A client's brand as the API answers it (routes/branding/branding.ts view). */
const BRAND = {
  type: "object",
  properties: {
    clientId: { type: "string" },
    displayName: { type: "string" },
    logoUri: { ...strOrNull, description: "The https address the logo was fetched from." },
    logoUrl: { ...strOrNull, description: "Our own URL of the stored logo (GET .../branding/logo?v=<hash>)." },
    accentColor: { ...strOrNull, description: "#rrggbb or #rgb." },
    supportUrl: strOrNull,
    shown: { type: "boolean", description: "Whether the pages show it now: the owner's tier gives branding." },
    whiteLabel: { type: "boolean", description: "Pro: the pages and e-mails carry no trace of this service's name." },
    updatedAt: { type: "string", format: "date-time" },
  },
  required: ["clientId", "displayName", "logoUri", "logoUrl", "accentColor", "supportUrl", "shown", "whiteLabel", "updatedAt"],
};
const NOT_YOURS = { 403: "The client is not yours.", 404: "No such client, or no brand set." };

/** routes/branding/branding.ts: a client's brand (Plus and Pro; docs/tiers.md "Branding"). */
export const brandingPaths: Paths = {
  "/api/clients/{clientId}/branding": {
    get: {
      tags: ["Client branding"],
      summary: "The brand of a client of yours, and whether the pages show it now (`shown`: your tier gives branding; `whiteLabel`: Pro)",
      security: SESSION,
      parameters: [CLIENT_ID],
      responses: { 200: jsonResponse("The brand.", BRAND), ...problemResponses({ ...UNAUTHORIZED, ...NOT_YOURS }) },
    },
    put: {
      tags: ["Client branding"],
      summary: "Set the brand of a client of yours: displayName, an https PNG/JPEG/WebP logoUri (fetched once, stored and served by us), an accentColor with 4.5:1 contrast against white, a supportUrl (https or mailto:)",
      security: SESSION,
      parameters: [CLIENT_ID],
      requestBody: jsonBody(BrandingInput),
      responses: {
        200: jsonResponse("The brand as stored.", BRAND),
        ...problemResponses({
          ...BAD_INPUT,
          ...UNAUTHORIZED,
          403: "The client is not yours, or your tier gives no branding (the problem names the tier required).",
          404: "No such client.",
          422: "The accent colour is below WCAG 2.2 AA contrast (its ratio is in the detail), or the logo could not be used (too large, not PNG/JPEG/WebP, a private address, not 200).",
        }),
      },
    },
    delete: {
      tags: ["Client branding"],
      summary: "Remove the brand of a client of yours (any tier)",
      security: SESSION,
      parameters: [CLIENT_ID],
      responses: { 204: { description: "Removed." }, ...problemResponses({ ...UNAUTHORIZED, ...NOT_YOURS }) },
    },
  },
  "/api/clients/{clientId}/branding/logo": {
    get: {
      tags: ["Client branding"],
      summary: "The client's stored logo, while its brand is shown (what the pages load; cached for good at its `?v=` URL)",
      security: PUBLIC,
      parameters: [CLIENT_ID, { name: "v", in: "query", required: false, schema: { type: "string" }, description: "The logo's version (start of its SHA-256), as logoUrl gives it." }],
      responses: {
        200: { description: "The image.", content: { "image/png": { schema: { type: "string", format: "binary" } }, "image/jpeg": { schema: { type: "string", format: "binary" } }, "image/webp": { schema: { type: "string", format: "binary" } } } },
        304: { description: "Not modified (If-None-Match)." },
        ...problemResponses({ 404: "No logo shown for this client." }),
      },
    },
  },
};
