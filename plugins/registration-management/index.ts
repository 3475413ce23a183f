import type { BetterAuthPlugin } from "better-auth";
import { APIError, createAuthEndpoint, createAuthMiddleware, isAPIError } from "better-auth/api";
import type { BetterAuthPluginDBSchema } from "@better-auth/core/db";
import type { Kysely } from "kysely";
import { OAuthError } from "../../lib/errors.js";
import { oauthErrorResponse } from "../../lib/respond.js";
import { hookOn } from "../hooks.js";
import { namedClientIds } from "../member-key/named-clients.js";
import { deleteClientRow, findClientRow, updateClientRow } from "../oauth-store/adapter.js";
import { clientExists } from "../oauth-store/clients.js";
import { clientInformation, clientUpdate, type ClientRow } from "./metadata.js";
import { keyUpdate } from "../client-keys/key-set.js";
import type { SafeFetch } from "../../lib/safe-fetch.js";
import { checkRegistrationToken, clientUseRecorder, newRegistrationToken, saveRegistrationToken } from "./store.js";
import { AUTH_PATHS } from "../../lib/auth-endpoints.js";
import type { Database } from "../../lib/db/tables.js";

/**
 * RFC 7592 (dynamic client registration management): every registration answers a
 * `registration_client_uri` and a `registration_access_token`; with that token, GET reads the
 * client, PUT replaces its metadata and DELETE removes it (a deleted client's token requests
 * then answer 401 invalid_client, the signal on which clients register again). Also records
 * when each client last received a token, for the expiry of unused anonymous registrations
 * (./store.ts expireUnusedAnonymousClients, run by server.ts).
 *
 * The token is stored hashed, so it cannot be shown twice: a read or an update answers a new
 * one and the old one stops working (RFC 7592 §3 lets the server rotate it; Keycloak does the
 * same). The client secret is stored hashed as well and is never in these answers.
 */
export const registrationManagementSchema = {
  oauthClientRegistration: {
    fields: {
      clientId: { type: "string", required: true, unique: true, references: { model: "oauthClient", field: "clientId", onDelete: "cascade" } },
      /** SHA-256 (hex) of the registration access token. */
      tokenHash: { type: "string", required: true },
      createdAt: { type: "date", required: true },
      /** When a token was last issued to the client (at most hourly precision). */
      lastUsedAt: { type: "date", required: false },
    },
  },
} satisfies BetterAuthPluginDBSchema;

export const REGISTRATION_PATH = AUTH_PATHS.register;

const invalidToken = (description: string): never => {
  throw new APIError("UNAUTHORIZED", { error: "invalid_token", error_description: description }, { "WWW-Authenticate": `Bearer error="invalid_token", error_description="${description}"` });
};

/** The parsed token request as a form again (string values), for `namedClientIds`. */
function formOf(body: unknown): URLSearchParams {
  const form = new URLSearchParams();
  if (body && typeof body === "object") for (const [name, value] of Object.entries(body)) if (typeof value === "string") form.append(name, value);
  return form;
}

function bearerToken(authorization: string | null | undefined): string | null {
  const match = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(authorization ?? "");
  return match?.[1] ?? null;
}

export function registrationManagement(options: { db: Kysely<Database>; baseURL: string; safeFetch: SafeFetch; development: boolean }) {
  const { db } = options;
  const clientUri = (clientId: string) => `${options.baseURL}${REGISTRATION_PATH}/${encodeURIComponent(clientId)}`;

  /** Hands out a new registration access token with the client's information. */
  async function withNewToken(row: ClientRow, extra: Record<string, unknown> = {}) {
    const token = newRegistrationToken();
    await saveRegistrationToken(db, row.clientId, token);
    return { ...clientInformation(row), ...extra, registration_client_uri: clientUri(row.clientId), registration_access_token: token };
  }

  /**
   * The client the bearer token manages. RFC 7592 §2: a bad token is a 401 (RFC 6750), and so
   * is a client that does not exist (§2.1), so an outsider learns nothing from the answer.
   */
  async function managedClient(ctx: { params?: Record<string, string>; headers?: Headers; context: { adapter: any } }): Promise<ClientRow> {
    const clientId = ctx.params?.clientId ?? "";
    const token = bearerToken(ctx.headers?.get("authorization"));
    if (!token) invalidToken("send the registration access token as a Bearer token");
    if (!clientId || clientId.length > 255 || !(await checkRegistrationToken(db, clientId, token!))) invalidToken("the registration access token is not valid for this client");
    const row = await findClientRow<ClientRow>(ctx.context.adapter, clientId);
    if (!row) invalidToken("the registration access token is not valid for this client");
    return row!;
  }

  /** After a registration: the management URI and its first token. */
  const answerManagementCredentials = hookOn(
    REGISTRATION_PATH,
    createAuthMiddleware(async (ctx) => {
      const returned = ctx.context.returned as Record<string, unknown> | undefined;
      if (!returned || isAPIError(returned) || returned instanceof Response || typeof returned.client_id !== "string") return;
      const token = newRegistrationToken();
      await saveRegistrationToken(db, returned.client_id, token);
      ctx.setStatus(201);
      return ctx.json({ ...returned, registration_client_uri: clientUri(returned.client_id), registration_access_token: token });
    }),
  );

  /**
   * After a token is issued: the client was used (for the expiry of unused registrations),
   * recorded at most hourly per client and process (./store.ts clientUseRecorder). A failed
   * write is logged, never the token request's failure.
   */
  const recordClientUse = clientUseRecorder(db);
  const recordUse = hookOn(
    AUTH_PATHS.token,
    createAuthMiddleware(async (ctx) => {
      const returned = ctx.context.returned;
      if (!returned || isAPIError(returned) || (returned instanceof Response && !returned.ok)) return;
      const ids = namedClientIds(formOf(ctx.body), ctx.headers?.get("authorization") ?? null);
      if (ids.size !== 1) return;
      await recordClientUse([...ids][0]!).catch((err) => ctx.context.logger.warn("client use not recorded", { err: err instanceof Error ? err.message : String(err) }));
    }),
  );

  /**
   * RFC 6749 §5.2: an unknown client is `invalid_client` (401). oauth-provider authenticates a
   * confidential client first, but for a public one (a client_id alone) it looks at the grant
   * first and answers a deleted client's refresh with `invalid_grant`; RFC 7592 clients
   * register again on `invalid_client`. So when a public client's request was refused with
   * anything else, the client is looked up and, unknown, the answer becomes `invalid_client`.
   * Done after the endpoint, not before it, so a request that succeeds (the client exists)
   * costs no read of its own; an unknown client cannot succeed (oauth-provider reads the
   * client before it issues anything).
   */
  const answerUnknownPublicClient = hookOn(
    AUTH_PATHS.token,
    createAuthMiddleware(async (ctx) => {
      const returned = ctx.context.returned;
      if (!isAPIError(returned) || (returned.body as { error?: unknown } | undefined)?.error === "invalid_client") return;
      const body = ctx.body && typeof ctx.body === "object" ? (ctx.body as Record<string, unknown>) : {};
      if (ctx.headers?.get("authorization") || body.client_secret !== undefined || body.client_assertion !== undefined) return;
      const clientId = body.client_id;
      if (typeof clientId !== "string" || clientId.length === 0 || clientId.length > 255) return;
      // A Response, not a thrown APIError: an after-hook's error would keep the endpoint's 400.
      if (!(await clientExists(db, clientId))) return oauthErrorResponse(new OAuthError("invalid_client", "unknown client"));
    }),
  );

  const readClient = createAuthEndpoint(`${REGISTRATION_PATH}/:clientId`, { method: "GET" }, async (ctx) => {
    const row = await managedClient(ctx);
    ctx.setHeader("Cache-Control", "no-store");
    return ctx.json(await withNewToken(row));
  });

  const updateClient = createAuthEndpoint(`${REGISTRATION_PATH}/:clientId`, { method: "PUT", cloneRequest: false }, async (ctx) => {
    const row = await managedClient(ctx);
    const update = clientUpdate(row, ctx.body, { development: options.development });
    if ("error" in update) throw new APIError("BAD_REQUEST", update);
    // A private_key_jwt client's keys are replaced too, a jwks_uri fetched through the guarded fetcher.
    const keys = row.tokenEndpointAuthMethod === "private_key_jwt" ? await keyUpdate(options.safeFetch, row, ctx.body as Record<string, unknown>, options.development) : { fields: {} };
    if ("error" in keys) throw new APIError("BAD_REQUEST", keys);
    const updated = await updateClientRow<ClientRow>(ctx.context.adapter, row.clientId, { ...update.fields, ...keys.fields, updatedAt: new Date() });
    ctx.setHeader("Cache-Control", "no-store");
    return ctx.json(await withNewToken((updated ?? { ...row, ...update.fields }) as ClientRow));
  });

  const deleteClient = createAuthEndpoint(`${REGISTRATION_PATH}/:clientId`, { method: "DELETE" }, async (ctx) => {
    const row = await managedClient(ctx);
    // Its tokens, consents and this registration go with it (foreign keys, on delete cascade).
    await deleteClientRow(ctx.context.adapter, row.clientId);
    return new Response(null, { status: 204, headers: { "Cache-Control": "no-store" } });
  });

  return {
    id: "registration-management",
    schema: registrationManagementSchema,
    endpoints: { readOAuthClientRegistration: readClient, updateOAuthClientRegistration: updateClient, deleteOAuthClientRegistration: deleteClient },
    hooks: { after: [answerManagementCredentials, answerUnknownPublicClient, recordUse] },
  } satisfies BetterAuthPlugin;
}
