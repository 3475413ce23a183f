import { BackupQuery } from "../../routes/backup/backup.js";
import { LinkOAuthBody } from "../../routes/backup/link-oauth.js";
import { SyncBody, SyncQuery } from "../../routes/backup/sync.js";
import { BAD_INPUT, BITCOIN_AUTH, jsonBody, jsonResponse, problemResponses, queryParameters, SESSION, UNAUTHORIZED, type Paths } from "../components.js";

/** routes/backup*.ts: the encrypted identity backup, its status, recovery links and key-signed sync. */
const BACKUP = { type: "object", properties: { encryptedBackup: { type: "string" }, updatedAt: { type: "string", format: "date-time" } } };
const errors = problemResponses({ ...BAD_INPUT, ...UNAUTHORIZED, 403: "Not allowed (wrong owner or missing scope).", 404: "No backup.", 429: "Rate limited." });
const tokenOrSession = [...SESSION, { bearer: [] }];

export const backupPaths: Paths = {
  "/api/backup": {
    get: {
      tags: ["Backup"],
      summary: "Read an encrypted backup: the signed-in user's primary identity's, by bapId (session or Bitcoin-Auth), or by linked OAuth account",
      security: [...SESSION, ...BITCOIN_AUTH],
      parameters: queryParameters(BackupQuery),
      responses: { 200: jsonResponse("The backup.", BACKUP), ...errors },
    },
    post: {
      tags: ["Backup"],
      summary: "Store the encrypted backup (session, or an OAuth access token with the backup write scope)",
      security: tokenOrSession,
      requestBody: { required: true, content: { "application/json": { schema: { type: "object" } } } },
      responses: { 200: jsonResponse("Stored."), ...errors, 413: { description: "Too large.", content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } } } },
    },
  },
  "/api/backup/status": {
    get: { tags: ["Backup"], summary: "Whether a backup exists and when it changed", security: tokenOrSession, responses: { 200: jsonResponse("Status."), ...errors } },
  },
  "/api/backup/link-oauth": {
    post: {
      tags: ["Backup"],
      summary: "Link a social account as a recovery route to the backup (OAuth access token only)",
      security: [{ bearer: [] }],
      requestBody: jsonBody(LinkOAuthBody),
      responses: { 200: jsonResponse("Linked."), ...errors },
    },
  },
  "/api/backup/sync": {
    get: {
      tags: ["Backup"],
      summary: "Pull the backup, signed by the identity's member key",
      security: BITCOIN_AUTH,
      parameters: queryParameters(SyncQuery),
      responses: { 200: jsonResponse("The backup.", BACKUP), ...errors },
    },
    post: {
      tags: ["Backup"],
      summary: "Push the backup, signed by the identity's member key",
      security: BITCOIN_AUTH,
      requestBody: jsonBody(SyncBody),
      responses: { 200: jsonResponse("Stored."), ...errors },
    },
  },
};
