import { ref, record } from "../schemas.js";
import { BAD_INPUT, jsonResponse, pathParameter, problemResponses, SESSION, UNAUTHORIZED, type Paths } from "../components.js";

/** routes/oauth/authorized-apps.ts: the OAuth clients the signed-in user has consented to. */
export const authorizedAppsPaths: Paths = {
  "/api/authorized-apps": {
    get: {
      tags: ["Authorized apps"],
      summary: "The apps the signed-in user has authorized",
      security: SESSION,
      responses: {
        200: jsonResponse("The apps, most recently authorized first.", record("The authorized apps.", { apps: { type: "array", items: ref("AuthorizedApp") } })),
        ...problemResponses(UNAUTHORIZED),
      },
    },
  },
  "/api/authorized-apps/{clientId}": {
    delete: {
      tags: ["Authorized apps"],
      summary: "Revoke an app's consent and its tokens",
      security: SESSION,
      parameters: [pathParameter("clientId")],
      responses: { 204: { description: "Revoked: the consent and every token the app held for you." }, ...problemResponses({ ...BAD_INPUT, ...UNAUTHORIZED, 404: "No such authorized app." }) },
    },
  },
};
