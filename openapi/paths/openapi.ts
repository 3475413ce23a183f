import { jsonResponse, PUBLIC, type Paths } from "../components.js";

/** routes/openapi.ts: this document and its reference page. */
export const openapiPaths: Paths = {
  "/api/openapi.json": {
    get: { tags: ["Reference"], summary: "This OpenAPI 3.1.1 document", security: PUBLIC, responses: {
        200: jsonResponse("The document.", { type: "object", properties: { openapi: { type: "string", const: "3.1.1" }, info: { type: "object" }, servers: { type: "array" }, paths: { type: "object" }, components: { type: "object" } }, required: ["openapi", "info", "paths"] }),
        304: { description: "Not modified (If-None-Match matched the ETag)." },
      },
    },
  },
  "/api/reference": {
    get: {
      tags: ["Reference"],
      summary: "The API reference page (HTML), rendered from this document",
      security: PUBLIC,
      responses: { 200: { description: "HTML page.", content: { "text/html": { schema: { type: "string" } } } } },
    },
  },
};
