import { createHash } from "node:crypto";
import type { BetterAuthPlugin } from "better-auth";
import { createAuthMiddleware, isAPIError } from "better-auth/api";
import type { Kysely } from "kysely";
import type { Logger } from "../../lib/logger.js";
import { CLIENT_IP_HEADER } from "../../lib/client-address.js";
import { hookOn, type Hook } from "../hooks.js";
import { auditSchema } from "./schema.js";
import { recordAuditEvent, type AuditEntry } from "./store.js";
import { AUTH_PATHS } from "../../lib/auth-endpoints.js";
import type { Database } from "../../lib/db/tables.js";
import { findUserIdByEmail } from "../core-store/users.js";

export interface AuditOptions {
  db: Kysely<Database>;
  logger?: Logger;
  /** Key sign-in's route, `/sign-in/<SIGMA_SERVICE_NAME>` (plugins/key-sign-in). */
  keySignInPath: string;
}

type HookContext = Parameters<Parameters<typeof createAuthMiddleware>[0]>[0];

/** Sign-in routes and the method each one is. A sign-in succeeded when the route made a session. */
function signInMethods(keySignInPath: string): ReadonlyMap<string, string> {
  return new Map([
    ["/sign-in/email", "password"],
    [keySignInPath, "key"],
    ["/callback/:id", "social"],
    ["/oauth2/callback/:providerId", "social"],
    ["/passkey/verify-authentication", "passkey"],
  ]);
}

const bodyOf = (ctx: HookContext): Record<string, unknown> => (ctx.body && typeof ctx.body === "object" ? (ctx.body as Record<string, unknown>) : {});
const str = (value: unknown, max = 200) => (typeof value === "string" && value.length > 0 && value.length <= max ? value : undefined);
/** The error code of a refused request: better-auth's `code` or RFC 6749's `error`, never its wording. */
const errorCode = (returned: unknown): string | undefined => {
  if (!isAPIError(returned)) return undefined;
  const body = (returned.body ?? {}) as Record<string, unknown>;
  return str(body.code) ?? str(body.error) ?? returned.status?.toString();
};
/** oauth-provider's `storeTokens: "hashed"`: SHA-256, base64url without padding. */
const storedTokenHash = (token: string) => createHash("sha256").update(token).digest("base64url");

/**
 * The audit log (issue 12): a table of security events and the after-hooks that record the
 * ones better-auth's endpoints carry out (sign-in by method, refresh-token reuse, client
 * registration and its RFC 7592 update and delete, consent). Our routes, the agents plugin and
 * the admin CLI call `recordAuditEvent` themselves. Recording never fails a request.
 */
export function audit(options: AuditOptions) {
  const { db, logger } = options;
  const record = (ctx: HookContext, entry: AuditEntry) => recordAuditEvent(db, logger, { ip: ctx.headers?.get(CLIENT_IP_HEADER) ?? null, ...entry });
  const methods = signInMethods(options.keySignInPath);

  const signIn: Hook = {
    matcher: (ctx) => Boolean(ctx.path && methods.has(ctx.path)),
    handler: createAuthMiddleware(async (ctx) => {
      const method = methods.get(ctx.path!)!;
      const returned = ctx.context.returned;
      const session = ctx.context.newSession;
      const provider = method === "social" ? str(ctx.params?.id ?? ctx.params?.providerId, 100) : undefined;
      // Two-factor's hook took the session back: the sign-in is not finished (the verify route makes it).
      const pending = returned && typeof returned === "object" && (returned as { twoFactorRedirect?: unknown }).twoFactorRedirect === true;
      if (session && !pending) return record(ctx, { event: "sign_in", userId: session.user.id, detail: { method, ...(provider ? { provider } : {}) } });
      if (!isAPIError(returned) || method === "social") return;
      const body = bodyOf(ctx);
      // The account the attempt named, when there is one (password: the e-mail; key: the BAP ID is in the detail).
      const email = method === "password" ? str(body.email, 320)?.toLowerCase() : undefined;
      const userId = email ? await findUserIdByEmail(db, email).catch(() => undefined) : undefined;
      const bapId = method === "key" ? str(body.bapId, 100) : undefined;
      await record(ctx, { event: "sign_in.failed", userId: userId ?? null, detail: { method, reason: errorCode(returned), ...(bapId ? { bapId } : {}) } });
    }),
  };

  /**
   * Refresh-token reuse (OAuth 2.1 §4.3.1; RFC 9700 §4.14.2): oauth-provider answers a rotated
   * (revoked) refresh token presented again with `invalid_grant` and deletes the whole family,
   * with the same `invalid refresh token` wording as other refusals. So the row must be seen as
   * it was before the endpoint ran (after it, the family is gone). Rather than read it a second
   * time on every refresh, the before-hook gives this request's auth context an adapter that
   * keeps the row oauth-provider itself reads (`findOne` on `oauthRefreshToken` by the token's
   * stored hash); the after-hook records the event when that row was revoked, outside the reuse
   * interval, and the answer was indeed `invalid_grant`. The context is a per-request copy
   * (better-auth's dispatch), so the wrapper ends with the request. Should oauth-provider stop
   * reading through `ctx.context.adapter`, no event is recorded: tests/ops/audit-log.test.ts
   * ("records the reuse of a rotated refresh token") goes red.
   */
  const refreshRows = new WeakMap<object, Record<string, any>>();
  const watchRefreshTokenRead: Hook = hookOn(
    AUTH_PATHS.token,
    createAuthMiddleware(async (ctx) => {
      const body = bodyOf(ctx);
      const token = body.grant_type === "refresh_token" ? str(body.refresh_token, 4096) : undefined;
      if (!token) return;
      const hash = storedTokenHash(token);
      const context = ctx.context;
      const adapter = context.adapter;
      const watched: typeof adapter = Object.create(adapter);
      watched.findOne = (async (query: Parameters<typeof adapter.findOne>[0]) => {
        const row = (await adapter.findOne(query)) as Record<string, any> | null;
        if (query.model === "oauthRefreshToken" && row?.token === hash && !refreshRows.has(context)) refreshRows.set(context, row);
        return row;
      }) as typeof adapter.findOne;
      context.adapter = watched;
    }),
  );
  const recordReuse: Hook = hookOn(
    AUTH_PATHS.token,
    createAuthMiddleware(async (ctx) => {
      const row = refreshRows.get(ctx.context);
      if (!row?.revoked || errorCode(ctx.context.returned) !== "invalid_grant") return;
      // Inside the reuse interval a retry gets the same answer again: not reuse.
      const replayUntil = row.rotationReplayExpiresAt ? new Date(row.rotationReplayExpiresAt) : null;
      if (row.rotatedAt && replayUntil && replayUntil >= new Date()) return;
      await record(ctx, { event: "refresh_token.reuse", userId: String(row.userId), clientId: String(row.clientId), detail: { action: "token family revoked" } });
    }),
  );

  const registered: Hook = hookOn(
    AUTH_PATHS.register,
    createAuthMiddleware(async (ctx) => {
      const returned = ctx.context.returned as Record<string, unknown> | undefined;
      if (!returned || isAPIError(returned) || returned instanceof Response) return;
      const clientId = str(returned.client_id, 255);
      if (!clientId) return;
      const userId = ctx.context.session?.user.id ?? null;
      await record(ctx, { event: "client.registered", clientId, userId, detail: { name: str(returned.client_name), authMethod: str(returned.token_endpoint_auth_method) } });
    }),
  );

  // RFC 7592 §2.2 and §2.3 (plugins/registration-management).
  const managed: Hook = {
    matcher: (ctx) => ctx.path === `${AUTH_PATHS.register}/:clientId`,
    handler: createAuthMiddleware(async (ctx) => {
      const method = ctx.request?.method ?? (ctx as { method?: string }).method;
      if ((method !== "PUT" && method !== "DELETE") || isAPIError(ctx.context.returned)) return;
      await record(ctx, { event: method === "PUT" ? "client.updated" : "client.deleted", clientId: str(ctx.params?.clientId, 255) ?? null });
    }),
  };

  const consented: Hook = hookOn(
    "/oauth2/consent",
    createAuthMiddleware(async (ctx) => {
      const body = bodyOf(ctx);
      if (body.accept !== true || isAPIError(ctx.context.returned)) return;
      const query = new URLSearchParams(typeof body.oauth_query === "string" ? body.oauth_query : "");
      const scope = str(body.scope, 1000) ?? str(query.get("scope"), 1000);
      await record(ctx, { event: "consent.granted", userId: ctx.context.session?.user.id ?? null, clientId: str(query.get("client_id"), 255) ?? null, detail: scope ? { scopes: scope.split(" ") } : undefined });
    }),
  );

  const consentDeleted: Hook = hookOn(
    "/oauth2/delete-consent",
    createAuthMiddleware(async (ctx) => {
      if (isAPIError(ctx.context.returned)) return;
      await record(ctx, { event: "consent.revoked", userId: ctx.context.session?.user.id ?? null, detail: { consentId: str(bodyOf(ctx).id, 255) } });
    }),
  );

  return {
    id: "audit",
    schema: auditSchema,
    hooks: { before: [watchRefreshTokenRead], after: [signIn, recordReuse, registered, managed, consented, consentDeleted] },
  } satisfies BetterAuthPlugin;
}
