import { PushBackupInput } from "../../plugins/backup/service.js";
import { BackupQuery } from "../../routes/backup/backup.js";
import { LinkOAuthBody } from "../../routes/backup/link-oauth.js";
import { SyncBody, SyncQuery } from "../../routes/backup/sync.js";
import { ref, record } from "../schemas.js";
import { BAD_INPUT, BITCOIN_AUTH, jsonBody, jsonResponse, problemResponses, queryParameters, SESSION, UNAUTHORIZED, type Paths } from "../components.js";

/** routes/backup*.ts: the encrypted identity backup, its status, recovery links and key-signed sync. */
const BACKUP = ref("BackupRecord");
const STORED = (message: string) => record(message, { success: { type: "boolean", const: true }, bapId: { type: "string" }, generation: { type: "integer" }, message: { type: "string" } });
const errors = problemResponses({ ...BAD_INPUT, ...UNAUTHORIZED, 403: "Not allowed (wrong owner or missing scope).", 404: "No backup.", 429: "Rate limited." });
const tokenOrSession = [...SESSION, { oauth2: ["backup:read", "backup:write"] }];

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
      requestBody: jsonBody(PushBackupInput),
      responses: { 200: jsonResponse("Stored: the new generation.", STORED("Backup stored.")), ...errors, 413: { description: "Too large.", content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } } } },
    },
  },
  "/api/backup/status": {
    get: { tags: ["Backup"], summary: "Whether a backup exists and when it changed", security: tokenOrSession, responses: { 200: jsonResponse("Status.", ref("BackupStatus")), ...errors } },
  },
  "/api/backup/link-oauth": {
    post: {
      tags: ["Backup"],
      summary: "Link a social account as a recovery route to the backup (OAuth access token only)",
      security: [{ bearerAuth: [] }],
      requestBody: jsonBody(LinkOAuthBody),
      responses: {
        200: jsonResponse("Linked.", record("The recovery link.", { success: { type: "boolean", const: true }, bapId: { type: "string" }, provider: { type: "string" }, accountId: { type: "string" }, linkedAt: { type: "string", format: "date-time" } })),
        ...errors,
        ...problemResponses({ 409: "The provider account is linked to another identity's backup (OAUTH_ALREADY_LINKED)." }),
      },
    },
  },
  "/api/backup/sync": {
    get: {
      tags: ["Backup"],
      summary: "Pull the backup, signed by the identity's member key",
      security: BITCOIN_AUTH,
      parameters: queryParameters(SyncQuery),
      responses: { 200: jsonResponse("The backup (`encryptedBackup` repeats `backup` for the Sigma client).", { allOf: [BACKUP, record("The ciphertext again.", { encryptedBackup: { type: "string" } })] }), ...errors },
    },
    post: {
      tags: ["Backup"],
      summary: "Push the backup, signed by the identity's member key",
      security: BITCOIN_AUTH,
      requestBody: jsonBody(SyncBody),
      responses: { 200: jsonResponse("Stored: the new generation.", STORED("Backup synced.")), ...errors },
    },
  },
};
