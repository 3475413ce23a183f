import { EligibilityQuery, SigningRequest } from "../../routes/certificates/certificates.js";
import { ChallengeRequest, RevokeRequest, VerifyRequest } from "../../routes/certificates/wallet-binding.js";
import { ref, record } from "../schemas.js";
import { BAD_INPUT, jsonBody, jsonResponse, MUTUAL_AUTH, pathParameter, problemResponses, PUBLIC, queryParameters, SESSION, UNAUTHORIZED, type Paths } from "../components.js";

const PEER = { 401: "Mutual authentication is missing or failed." };
const tags = ["Certificates"];
const str = { type: "string" };
const SIGNED = {
  type: "object",
  description: "A BRC-52 certificate signed by this server: type, serialNumber, subject, certifier, revocationOutpoint, fields (encrypted for the subject), signature, and the subject's field keys (keyring).",
  properties: { type: str, serialNumber: str, subject: str, certifier: str, revocationOutpoint: str, fields: { type: "object", additionalProperties: str }, signature: str, keyringForSubject: { type: "object", additionalProperties: str } },
  required: ["type", "serialNumber", "subject", "certifier", "revocationOutpoint", "fields", "signature"],
};
const REVOCATION = record("Where the revocation stands.", { serialNumber: str, revocation: ref("RevocationView"), note: str }, ["note"]);

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
      responses: { 200: jsonResponse("The catalog.", record("Every catalog type.", { types: { type: "array", items: ref("CertificateType") } })) },
    },
  },
  "/api/certificates/signCertificate": {
    post: {
      tags,
      summary: "BRC-52 issuance over mutual authentication (off unless CERTIFICATE_ISSUANCE_ENABLED and CERTIFICATE_FUNDING_KEY)",
      security: MUTUAL_AUTH,
      requestBody: jsonBody(SigningRequest),
      responses: { 200: jsonResponse("The signed certificate.", SIGNED), ...problemResponses({ ...BAD_INPUT, ...PEER, 403: "The fields cannot be attested for you.", 503: "Issuance is disabled (CERTIFICATE_ISSUANCE_DISABLED), or no revocation outpoint could be funded now (REVOCATION_FUNDING_UNAVAILABLE)." }) },
    },
  },
  "/api/certificates/status/{serialNumber}": {
    get: { tags, summary: "A certificate's revocation status (never cached)", security: PUBLIC, parameters: [pathParameter("serialNumber")], responses: {
        200: jsonResponse("The status.", record("The certificate's status.", { serialNumber: str, type: str, certifier: str, revocationOutpoint: { type: ["string", "null"] }, issuedAt: { type: "string", format: "date-time" }, revocation: ref("RevocationView") })),
        ...problemResponses({ 400: "Not a serial number.", 404: "No such certificate." }),
      },
    },
  },
  "/api/certificates/revoke/{serialNumber}": {
    post: {
      tags,
      summary: "Revoke a certificate (its subject only, over mutual authentication)",
      security: MUTUAL_AUTH,
      parameters: [pathParameter("serialNumber")],
      responses: { 200: jsonResponse("Revoked and final.", REVOCATION), 202: jsonResponse("Revocation under way: ask the status again.", REVOCATION), ...problemResponses({ ...PEER, 403: "Not the certificate's subject.", 404: "No such certificate." }) },
    },
  },
  "/api/certificates/issued": {
    get: { tags, summary: "The certificates issued to the authenticated peer", security: MUTUAL_AUTH, responses: {
        200: jsonResponse("The certificates.", record("The peer's certificates.", { subject: str, certificates: { type: "array", items: record("An issued certificate.", { serialNumber: str, type: str, issuedAt: { type: "string", format: "date-time" }, revocation: ref("RevocationView") }) } })),
        ...problemResponses(PEER),
      },
    },
  },
  "/api/certificates/readiness": {
    get: {
      tags,
      summary: "Issuance readiness: always 503 (disabled or protected)",
      security: PUBLIC,
      responses: {
        503: jsonResponse("Always 503 (spec): `protected` once issuance and revocation are both on, else `disabled`.", record("Readiness.", { status: { type: "string", enum: ["disabled", "protected"] }, issuance: { type: "boolean" }, revocation: { type: "boolean" } })),
      },
    },
  },
  "/api/certificates/eligibility": {
    get: {
      tags,
      summary: "Which catalog types an identity of the signed-in user could hold",
      security: SESSION,
      parameters: queryParameters(EligibilityQuery),
      responses: {
        200: jsonResponse("Eligibility by type.", record("The identity's eligibility.", { bapId: str, issuanceEnabled: { type: "boolean" }, types: { type: "array", items: record("One type.", { key: str, eligible: { type: "boolean" }, issuable: { type: "boolean" }, reason: str }) } })),
        ...problemResponses({ ...BAD_INPUT, ...UNAUTHORIZED, 404: "No such identity of yours." }) },
    },
  },
  "/api/certificates/wallet-binding/challenge": {
    post: { tags, summary: "A challenge for a wallet to sign, binding it to an identity", security: SESSION, requestBody: jsonBody(ChallengeRequest), responses: { 200: jsonResponse("The challenge.", record("What the wallet signs (BRC-100 createSignature with this protocolID and keyID).", { bapId: str, identityKey: str, challenge: str, protocolID: { type: "array" }, keyID: str, expiresAt: { type: "string", format: "date-time" } })), ...problemResponses({ ...BAD_INPUT, ...UNAUTHORIZED, 404: "No such identity of yours." }) } },
  },
  "/api/certificates/wallet-binding/verify": {
    post: { tags, summary: "The wallet's signature over the challenge", security: SESSION, requestBody: jsonBody(VerifyRequest), responses: { 200: jsonResponse("The binding.", ref("WalletBinding")), ...problemResponses({ ...BAD_INPUT, ...UNAUTHORIZED, 404: "No challenge." }) } },
  },
  "/api/certificates/wallet-binding/resolve": {
    get: { tags, summary: "The verified binding of an identity or a wallet key (public)", security: PUBLIC, parameters: [{ name: "bapId", in: "query", schema: { type: "string" } }, { name: "identityKey", in: "query", schema: { type: "string" } }], responses: { 200: jsonResponse("By bapId: the binding. By identityKey: every identity bound to that key.", { anyOf: [ref("WalletBinding"), record("The bindings of a wallet key.", { identityKey: str, bindings: { type: "array", items: ref("WalletBinding") } })] }), ...problemResponses({ ...BAD_INPUT, 404: "No verified binding." }) } },
  },
  "/api/certificates/wallet-binding/revoke": {
    post: { tags, summary: "Remove an identity's wallet binding", security: SESSION, requestBody: jsonBody(RevokeRequest), responses: { 200: jsonResponse("Removed.", record("Removed.", { bapId: str, revoked: { type: "boolean", const: true } })), ...problemResponses({ ...BAD_INPUT, ...UNAUTHORIZED, 404: "No binding." }) } },
  },
  "/.well-known/auth": {
    get: {
      tags,
      summary: "BRC-103 metadata: this server's identity key and where to shake hands",
      security: PUBLIC,
      responses: {
        200: jsonResponse("The metadata.", record("Mutual authentication metadata.", { identityKey: str, authVersion: str, handshakeEndpoint: { type: "string", format: "uri" }, certificateIssuance: record("Issuance.", { enabled: { type: "boolean" }, endpoint: { type: "string", format: "uri" }, protocol: { type: "string", const: "BRC-52" } }) })),
      },
    },
    post: { tags, summary: "BRC-103 handshake messages (x-bsv-auth-* headers)", security: PUBLIC, responses: { 200: jsonResponse("The handshake answer (BRC-103 AuthMessage).", { type: "object", properties: { version: str, messageType: str, identityKey: str, nonce: str, initialNonce: str, yourNonce: str, signature: { type: "array", items: { type: "integer" } } }, required: ["version", "messageType", "identityKey"] }), ...problemResponses({ 400: "Not a handshake message.", 429: "Too many handshakes." }) } },
  },
};
