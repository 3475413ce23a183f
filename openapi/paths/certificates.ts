import { EligibilityQuery, SigningRequest } from "../../routes/certificates/certificates.js";
import { ChallengeRequest, RevokeRequest, VerifyRequest } from "../../routes/certificates/wallet-binding.js";
import { BAD_INPUT, jsonBody, jsonResponse, MUTUAL_AUTH, pathParameter, problemResponses, PUBLIC, queryParameters, SESSION, UNAUTHORIZED, type Paths } from "../components.js";

const PEER = { 401: "Mutual authentication is missing or failed." };
const tags = ["Certificates"];

/**
 * routes/certificates/types.ts (the catalog), routes/certificates/certificates.ts (issuance, status,
 * revocation, readiness, eligibility), routes/certificates/wallet-binding.ts and routes/certificates/mutual-auth.ts.
 */
export const certificatePaths: Paths = {
  "/api/certificates/types": {
    get: {
      tags,
      summary: "The certificate catalog: every type with its fixed type ID, owner, fields and links",
      security: PUBLIC,
      responses: { 200: jsonResponse("The catalog.", { type: "object", properties: { types: { type: "array", items: { type: "object" } } } }) },
    },
  },
  "/api/certificates/signCertificate": {
    post: {
      tags,
      summary: "BRC-52 issuance over mutual authentication (off unless CERTIFICATE_ISSUANCE_ENABLED and CERTIFICATE_FUNDING_KEY)",
      security: MUTUAL_AUTH,
      requestBody: jsonBody(SigningRequest),
      responses: { 200: jsonResponse("The signed certificate."), ...problemResponses({ ...BAD_INPUT, ...PEER, 403: "The fields cannot be attested for you.", 503: "Issuance is disabled (CERTIFICATE_ISSUANCE_DISABLED), or no revocation outpoint could be funded now (REVOCATION_FUNDING_UNAVAILABLE)." }) },
    },
  },
  "/api/certificates/status/{serialNumber}": {
    get: { tags, summary: "A certificate's revocation status (never cached)", security: PUBLIC, parameters: [pathParameter("serialNumber")], responses: { 200: jsonResponse("The status."), ...problemResponses({ 404: "No such certificate." }) } },
  },
  "/api/certificates/revoke/{serialNumber}": {
    post: {
      tags,
      summary: "Revoke a certificate (its subject only, over mutual authentication)",
      security: MUTUAL_AUTH,
      parameters: [pathParameter("serialNumber")],
      responses: { 200: jsonResponse("The revocation state."), ...problemResponses({ ...PEER, 403: "Not the certificate's subject.", 404: "No such certificate." }) },
    },
  },
  "/api/certificates/issued": {
    get: { tags, summary: "The certificates issued to the authenticated peer", security: MUTUAL_AUTH, responses: { 200: jsonResponse("The certificates."), ...problemResponses(PEER) } },
  },
  "/api/certificates/readiness": {
    get: { tags, summary: "Issuance readiness: always 503 (disabled or protected)", security: PUBLIC, responses: problemResponses({ 503: "Not enabled." }) },
  },
  "/api/certificates/eligibility": {
    get: {
      tags,
      summary: "Which catalog types an identity of the signed-in user could hold",
      security: SESSION,
      parameters: queryParameters(EligibilityQuery),
      responses: { 200: jsonResponse("Eligibility by type."), ...problemResponses({ ...BAD_INPUT, ...UNAUTHORIZED, 404: "No such identity of yours." }) },
    },
  },
  "/api/certificates/wallet-binding/challenge": {
    post: { tags, summary: "A challenge for a wallet to sign, binding it to an identity", security: SESSION, requestBody: jsonBody(ChallengeRequest), responses: { 200: jsonResponse("The challenge."), ...problemResponses({ ...BAD_INPUT, ...UNAUTHORIZED, 404: "No such identity of yours." }) } },
  },
  "/api/certificates/wallet-binding/verify": {
    post: { tags, summary: "The wallet's signature over the challenge", security: SESSION, requestBody: jsonBody(VerifyRequest), responses: { 200: jsonResponse("The binding."), ...problemResponses({ ...BAD_INPUT, ...UNAUTHORIZED, 404: "No challenge." }) } },
  },
  "/api/certificates/wallet-binding/resolve": {
    get: { tags, summary: "The verified binding of an identity or a wallet key (public)", security: PUBLIC, parameters: [{ name: "bapId", in: "query", schema: { type: "string" } }, { name: "identityKey", in: "query", schema: { type: "string" } }], responses: { 200: jsonResponse("The binding."), ...problemResponses({ ...BAD_INPUT, 404: "No verified binding." }) } },
  },
  "/api/certificates/wallet-binding/revoke": {
    post: { tags, summary: "Remove an identity's wallet binding", security: SESSION, requestBody: jsonBody(RevokeRequest), responses: { 200: jsonResponse("Removed."), ...problemResponses({ ...BAD_INPUT, ...UNAUTHORIZED, 404: "No binding." }) } },
  },
  "/.well-known/auth": {
    get: { tags, summary: "BRC-103 metadata: this server's identity key and where to shake hands", security: PUBLIC, responses: { 200: jsonResponse("The metadata.") } },
    post: { tags, summary: "BRC-103 handshake messages (x-bsv-auth-* headers)", security: PUBLIC, responses: { 200: jsonResponse("The handshake answer."), ...problemResponses({ 400: "Not a handshake message.", 429: "Too many handshakes." }) } },
  },
};
