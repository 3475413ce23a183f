import { ByBapId, Create } from "../../routes/domain-verifications/domain-verifications.js";
import { ref, record } from "../schemas.js";
import { BAD_INPUT, jsonBody, jsonResponse, pathParameter, problemResponses, queryParameters, SESSION, UNAUTHORIZED, type Paths } from "../components.js";

/** routes/domain-verifications/domain-verifications.ts: proving a domain for an identity (and optionally an OAuth client). */
export const domainVerificationPaths: Paths = {
  "/api/domain-verifications": {
    get: {
      tags: ["Domain verification"],
      summary: "The domain verifications of one of the signed-in user's identities",
      security: SESSION,
      parameters: queryParameters(ByBapId),
      responses: { 200: jsonResponse("The records.", record("The identity's domain verifications.", { verifications: { type: "array", items: ref("DomainVerification") } })), ...problemResponses({ ...BAD_INPUT, ...UNAUTHORIZED, 404: "No such identity of yours." }) },
    },
    post: {
      tags: ["Domain verification"],
      summary: "Start a domain verification (dns or https): answers the challenge to put in place",
      security: SESSION,
      requestBody: jsonBody(Create),
      responses: { 201: jsonResponse("The record with its challenge.", ref("DomainVerification")), ...problemResponses({ ...BAD_INPUT, ...UNAUTHORIZED, 403: "The OAuth client is not yours.", 404: "No such identity of yours.", 409: "You hold DOMAIN_VERIFICATION_MAX_PENDING pending verifications already." }) },
    },
  },
  "/api/domain-verifications/{id}/verify": {
    post: {
      tags: ["Domain verification"],
      summary: "Check the challenge now (DNS TXT record or HTTPS well-known file)",
      security: SESSION,
      parameters: [pathParameter("id")],
      responses: {
        200: jsonResponse("Verified.", ref("DomainVerification")),
        ...problemResponses({ ...UNAUTHORIZED, 404: "No such verification of yours.", 409: "The challenge expired: start again.", 422: "The challenge is not in place.", 429: "Too many checks." }),
      },
    },
  },
};
