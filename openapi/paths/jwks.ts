import { jsonResponse, PUBLIC, type Paths } from "../components.js";

/** routes/discovery/jwks.ts: the public signing keys (served by us, in front of better-auth's /jwks). */
export const jwksPaths: Paths = {
  "/api/auth/jwks": {
    get: {
      tags: ["Discovery"],
      summary: "JSON Web Key Set (RFC 7517) of the ID token and access token signing keys",
      security: PUBLIC,
      responses: { 200: jsonResponse("The key set.", { type: "object", properties: { keys: { type: "array", items: { type: "object", description: "A public JSON Web Key (RFC 7517 §4).", properties: { kty: { type: "string" }, kid: { type: "string" }, alg: { type: "string" }, use: { type: "string" }, crv: { type: "string" }, x: { type: "string" }, y: { type: "string" }, n: { type: "string" }, e: { type: "string" } }, required: ["kty"] } } }, required: ["keys"] }), 304: { description: "Not modified (If-None-Match matched the ETag)." } },
    },
  },
};
