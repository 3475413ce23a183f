import { APIError, createAuthMiddleware } from "better-auth/api";
import { AUTH_PATHS } from "../../lib/auth-endpoints.js";
import { isJsonObject, parseJsonOrNull } from "../../lib/json.js";
import type { Hook } from "../hooks.js";
import { findClientRow, updateClientRow } from "../oauth-store/adapter.js";
import { CLIENTS_METADATA_KEY } from "./options.js";

function invalidMetadata(description: string): never {
  throw new APIError("BAD_REQUEST", { error: "invalid_client_metadata", error_description: description });
}

const isRegistration = (ctx: { path?: string }) => ctx.path === AUTH_PATHS.register;
const bodyOf = (ctx: { body?: unknown }) => (isJsonObject(ctx.body) ? ctx.body : null);

/**
 * `id_jag_clients` at dynamic registration: an object from a resource authorization server's
 * issuer to the `client_id` this client holds there (at most 20, each issuer an http(s) URL,
 * each client_id 1 to 255 characters). Checked before oauth-provider registers the client,
 * kept in the client's metadata after, and echoed in the answer.
 */
export function idJagRegistrationHooks(): { before: Hook; after: Hook } {
  const before: Hook = {
    matcher: isRegistration,
    handler: createAuthMiddleware(async (ctx) => {
      const value = bodyOf(ctx)?.[CLIENTS_METADATA_KEY];
      if (value === undefined) return;
      if (!isJsonObject(value)) invalidMetadata(`${CLIENTS_METADATA_KEY} must be an object: issuer -> client_id`);
      const entries = Object.entries(value);
      if (entries.length > 20) invalidMetadata(`${CLIENTS_METADATA_KEY} may name at most 20 issuers`);
      for (const [issuer, clientId] of entries) {
        if (!URL.canParse(issuer) || !/^https?:\/\/[^?#]+$/.test(issuer)) invalidMetadata(`${CLIENTS_METADATA_KEY}: ${issuer.slice(0, 100)} is not an issuer URL`);
        if (typeof clientId !== "string" || !clientId || clientId.length > 255) invalidMetadata(`${CLIENTS_METADATA_KEY}: the client_id at ${issuer} must be a string of 1 to 255 characters`);
      }
    }),
  };
  const after: Hook = {
    matcher: isRegistration,
    handler: createAuthMiddleware(async (ctx) => {
      const returned = ctx.context.returned;
      const value = bodyOf(ctx)?.[CLIENTS_METADATA_KEY];
      if (!isJsonObject(returned) || typeof returned.client_id !== "string" || !isJsonObject(value)) return;
      const row = await findClientRow<{ metadata?: unknown }>(ctx.context.adapter, returned.client_id);
      const parsed = typeof row?.metadata === "string" ? parseJsonOrNull(row.metadata) : row?.metadata;
      const stored = isJsonObject(parsed) ? parsed : {};
      await updateClientRow(ctx.context.adapter, returned.client_id, { metadata: { ...stored, [CLIENTS_METADATA_KEY]: value } });
      return ctx.json({ ...returned, [CLIENTS_METADATA_KEY]: value });
    }),
  };
  return { before, after };
}
