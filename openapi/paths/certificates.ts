import { jsonResponse, PUBLIC, type Paths } from "../components.js";

/** routes/certificate-types.ts: the public wallet-certificate catalog. */
export const certificatePaths: Paths = {
  "/api/certificates/types": {
    get: {
      tags: ["Certificates"],
      summary: "The certificate catalog: every type with its fixed type ID, owner, fields and links",
      security: PUBLIC,
      responses: { 200: jsonResponse("The catalog.", { type: "object", properties: { types: { type: "array", items: { type: "object" } } } }) },
    },
  },
};
