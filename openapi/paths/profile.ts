import { ByBapIdOrPubkey, Publish, SaveDraft } from "../../routes/profile/bap-profile.js";
import { ByBapId, Pubkey } from "../../routes/profile/shared.js";
import { RegisterIdentity, RotateMemberKey } from "../../routes/profile/user-bap-ids.js";
import * as v from "valibot";
import { OK_STATUS, ref, record } from "../schemas.js";
import { BAD_INPUT, BITCOIN_AUTH, jsonBody, jsonResponse, problemResponses, PUBLIC, queryParameters, SESSION, UNAUTHORIZED, type Paths } from "../components.js";

/** routes/profile/user-bap-ids.ts and routes/profile/bap-profile.ts: BAP identities and their profiles. */
const errors = problemResponses({ ...BAD_INPUT, ...UNAUTHORIZED, 403: "Refused (a Bitcoin-Auth token by another key, or from another site).", 404: "No such identity of yours.", 409: "Conflict.", 429: "Too many writes." });
const ok = (result: string) => record("Done, with the result.", { status: { type: "string", const: "OK" }, result: ref(result) });
const registration = record("The registration.", { bapId: ref("BapIdentityRegistration") });

export const profilePaths: Paths = {
  "/api/user/bap-ids": {
    get: {
      tags: ["Identities"],
      summary: "The signed-in user's BAP identities, or (public) the identities a member key controls (?pubkey)",
      security: [...SESSION, {}],
      parameters: queryParameters(v.object({ pubkey: v.optional(Pubkey) })),
      responses: {
        200: jsonResponse("The signed-in user's registrations (primary first), or with ?pubkey the public records of that member key's identities.", record("Identities.", { bapIds: { type: "array", items: { anyOf: [ref("BapIdentityRegistration"), ref("BapIdentityPublic")] } } })),
        ...errors,
      },
    },
    post: {
      tags: ["Identities"],
      summary: "Register a BAP identity, signed by its member key (x-auth-token over the body)",
      security: [{ ...SESSION[0], ...BITCOIN_AUTH[0] }],
      requestBody: jsonBody(RegisterIdentity),
      responses: { 200: jsonResponse("Already registered to you: the registration, updated.", registration), 201: jsonResponse("Registered.", registration), ...errors },
    },
    delete: { tags: ["Identities"], summary: "Remove one of the signed-in user's identities", security: SESSION, parameters: queryParameters(ByBapId), responses: { 200: jsonResponse("Removed.", OK_STATUS), ...errors } },
  },
  "/api/user/bap-ids/member-key": {
    post: {
      tags: ["Identities"],
      summary: "Hand an identity over to a rotated member key: signed by the key in force (x-auth-token) and by the new key (x-member-key-proof), over the same body",
      security: [{ ...SESSION[0], ...BITCOIN_AUTH[0] }],
      requestBody: jsonBody(RotateMemberKey),
      responses: { 200: jsonResponse("The registration, with the new member key.", registration), ...problemResponses({ ...BAD_INPUT, ...UNAUTHORIZED, 403: "x-auth-token is not by the identity's member key in force.", 404: "No such identity of yours.", 429: "Too many writes." }) },
    },
  },
  "/api/user/bap-ids/confirm": {
    post: { tags: ["Identities"], summary: "Confirm an identity", security: SESSION, requestBody: jsonBody(ByBapId), responses: { 200: jsonResponse("Confirmed.", registration), ...errors } },
  },
  "/api/bap/profile": {
    get: {
      tags: ["Profiles"],
      summary: "A profile by bapId or pubkey (the draft too, for its owner)",
      security: [...SESSION, {}],
      parameters: queryParameters(ByBapIdOrPubkey),
      responses: { 200: jsonResponse("The profile.", ok("BapProfile")), ...errors },
    },
    post: { tags: ["Profiles"], summary: "Save a profile draft", security: SESSION, requestBody: jsonBody(SaveDraft), responses: { 200: jsonResponse("Saved.", ok("BapProfileDraft")), ...errors } },
    delete: { tags: ["Profiles"], summary: "Delete a profile draft", security: SESSION, parameters: queryParameters(ByBapId), responses: { 200: jsonResponse("Deleted.", OK_STATUS), ...errors } },
  },
  "/api/bap/profile/published": {
    post: { tags: ["Profiles"], summary: "Record a profile publication the owner broadcast", security: SESSION, requestBody: jsonBody(Publish), responses: { 201: jsonResponse("Recorded.", ok("BapPublication")), ...errors } },
    get: { tags: ["Profiles"], summary: "The latest recorded publication of an identity", security: PUBLIC, parameters: queryParameters(ByBapId), responses: { 200: jsonResponse("The publication.", ok("BapPublication")), ...errors } },
  },
};
