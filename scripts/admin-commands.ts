import { createJwk } from "better-auth/plugins";
import type { Kysely } from "kysely";
import type { Auth } from "../auth.config.js";
import type { Logger } from "../lib/logger.js";
import { recordAuditEvent, type AuditEntry } from "../plugins/audit/store.js";
import { findSessionToken, listStoredSessions } from "../plugins/core-store/sessions.js";
import * as clients from "../plugins/oauth-store/clients.js";
import { revokeUserOAuthTokens } from "../plugins/oauth-store/grants.js";
import { canonicalResource } from "../plugins/resource-policy/index.js";
import type { Database } from "../lib/db/tables.js";

/** The admin CLI's commands (scripts/admin.ts parses the arguments and prints the result). */

export interface AdminServices {
  auth: Auth;
  db: Kysely<Database>;
  logger: Logger;
  exportOpenApi(): Promise<unknown>;
  writeFile(file: string, text: string): void;
}

export interface CommandFlags {
  all: boolean;
  reason?: string;
}

/** What a command prints: lines for people, one JSON value for machines (--json). */
export interface CommandResult {
  lines: string[];
  json: unknown;
}

type Command = (services: AdminServices, args: string[], flags: CommandFlags) => Promise<CommandResult>;

/** Bad input: the CLI prints the message and exits 1. */
export class UsageError extends Error {}


const iso = (d: Date | null) => (d ? d.toISOString() : "-");

function audit(services: AdminServices, command: string, detail: Record<string, unknown>, extra: Partial<AuditEntry> = {}) {
  return recordAuditEvent(services.db, services.logger, { event: "admin.action", ...extra, detail: { command, ...detail } });
}

function one(args: string[], what: string): string {
  if (args.length !== 1 || !args[0]) throw new UsageError(`expected exactly one ${what}`);
  return args[0];
}

async function findUser(services: AdminServices, ref: string) {
  const { internalAdapter } = await services.auth.$context;
  const user = ref.includes("@") ? (await internalAdapter.findUserByEmail(ref.toLowerCase()))?.user : await internalAdapter.findUserById(ref);
  if (!user) throw new UsageError(`no user with e-mail or id "${ref}"`);
  return user as typeof user & { banned?: boolean | null; banReason?: string | null };
}

async function listClients(services: AdminServices): Promise<CommandResult> {
  const all = await clients.listClients(services.db);
  await audit(services, "clients list", { count: all.length });
  return {
    lines: all.length === 0 ? ["no clients"] : all.map((c) => `${c.clientId}  ${c.disabled ? "disabled" : "enabled "}  ${c.public ? "public      " : "confidential"}  ${iso(c.createdAt)}  ${c.name ?? ""}`),
    json: all.map((c) => ({ ...c, createdAt: c.createdAt?.toISOString() ?? null })),
  };
}

function setClientDisabled(disabled: boolean): Command {
  return async (services, args) => {
    const clientId = one(args, "client id");
    if (!(await clients.setClientDisabled(services.db, clientId, disabled))) throw new UsageError(`no client with id "${clientId}"`);
    await audit(services, disabled ? "clients disable" : "clients enable", {}, { clientId });
    return { lines: [`client ${clientId} ${disabled ? "disabled" : "enabled"}`], json: { clientId, disabled } };
  };
}

/**
 * A new signing key now, made the way the jwt plugin makes one (same algorithm, encryption and
 * expiry), through the shared key cache's adapter. The old keys stay published until they
 * expire. With REDIS_URL the running servers are told through Redis and publish the new set
 * within about a second; without it, within their cache interval (lib/jwks-cache.ts).
 */
async function rotateKeys(services: AdminServices, args: string[]): Promise<CommandResult> {
  if (args.length) throw new UsageError("keys rotate takes no arguments");
  const context = await services.auth.$context;
  const jwtPlugin = context.options.plugins?.find((p) => p.id === "jwt") as { options?: Parameters<typeof createJwk>[1] } | undefined;
  if (!jwtPlugin) throw new UsageError("the jwt plugin is not configured");
  const key = (await createJwk({ context } as never, jwtPlugin.options)) as { id: string; alg?: string; expiresAt?: Date | null };
  const detail = { kid: key.id, alg: key.alg ?? null };
  await recordAuditEvent(services.db, services.logger, { event: "signing_key.rotated", detail: { ...detail, by: "admin cli" } });
  await audit(services, "keys rotate", detail);
  return { lines: [`new signing key ${key.id}${key.alg ? ` (${key.alg})` : ""}; published by running servers ${context.options.secondaryStorage ? "within a second" : "within 30 s"}`], json: { ...detail, expiresAt: key.expiresAt ? new Date(key.expiresAt).toISOString() : null } };
}

/** better-auth's admin plugin fields; a ban also ends the user's sessions and OAuth grants' tokens. */
async function banUser(services: AdminServices, args: string[], flags: CommandFlags): Promise<CommandResult> {
  const user = await findUser(services, one(args, "e-mail or user id"));
  const reason = flags.reason?.slice(0, 500) ?? null;
  const { internalAdapter } = await services.auth.$context;
  await internalAdapter.updateUser(user.id, { banned: true, banReason: reason, banExpires: null });
  await internalAdapter.deleteUserSessions(user.id);
  await revokeUserOAuthTokens(services.db, user.id);
  await audit(services, "users ban", { reason }, { userId: user.id });
  return { lines: [`banned ${user.email} (${user.id}); sessions and OAuth tokens revoked`], json: { userId: user.id, email: user.email, banned: true, reason } };
}

async function unbanUser(services: AdminServices, args: string[]): Promise<CommandResult> {
  const user = await findUser(services, one(args, "e-mail or user id"));
  const { internalAdapter } = await services.auth.$context;
  await internalAdapter.updateUser(user.id, { banned: false, banReason: null, banExpires: null });
  await audit(services, "users unban", {}, { userId: user.id });
  return { lines: [`unbanned ${user.email} (${user.id})`], json: { userId: user.id, email: user.email, banned: false } };
}

async function listSessions(services: AdminServices, args: string[]): Promise<CommandResult> {
  const user = await findUser(services, one(args, "e-mail or user id"));
  const sessions = await listStoredSessions(services.db, user.id);
  await audit(services, "sessions list", { count: sessions.length }, { userId: user.id });
  return {
    lines: sessions.length ? sessions.map((s) => `${s.id}  created ${iso(s.createdAt)}  expires ${iso(s.expiresAt)}  ${s.ipAddress ?? "-"}  ${s.userAgent ?? ""}`) : [`${user.email} has no sessions`],
    json: sessions.map((s) => ({ ...s, createdAt: s.createdAt.toISOString(), expiresAt: s.expiresAt.toISOString() })),
  };
}

/** Through better-auth's internal adapter, so a session cached in Redis goes too. */
async function revokeSessions(services: AdminServices, args: string[], flags: CommandFlags): Promise<CommandResult> {
  const [ref, sessionId, ...rest] = args;
  if (!ref || rest.length || (flags.all ? sessionId !== undefined : sessionId === undefined)) throw new UsageError("sessions revoke <email|id> takes --all or one session id");
  const user = await findUser(services, ref);
  const { internalAdapter } = await services.auth.$context;
  if (flags.all) {
    const count = (await listStoredSessions(services.db, user.id)).length;
    await internalAdapter.deleteUserSessions(user.id);
    await audit(services, "sessions revoke", { all: true, count }, { userId: user.id });
    return { lines: [`revoked ${count} session(s) of ${user.email}`], json: { userId: user.id, revoked: count } };
  }
  const token = await findSessionToken(services.db, user.id, sessionId!);
  if (token === null) throw new UsageError(`${user.email} has no session "${sessionId}"`);
  await internalAdapter.deleteSession(token);
  await audit(services, "sessions revoke", { sessionId }, { userId: user.id });
  return { lines: [`revoked session ${sessionId} of ${user.email}`], json: { userId: user.id, revoked: 1, sessionId } };
}

/**
 * A client's RFC 8707 allow-list (plugins/resource-policy): with resources, it replaces the
 * list (oauth-provider's `oauthClientResource` links, each resource made an `oauthResource` row
 * if it is not one yet); with --all, it is cleared (any https resource the person consents to);
 * with neither, it is shown.
 */
async function clientResources(services: AdminServices, args: string[], flags: CommandFlags): Promise<CommandResult> {
  const [clientId, ...resources] = args;
  if (!clientId || (flags.all && resources.length)) throw new UsageError("clients resources <clientId> takes resources, --all, or nothing (to show the list)");
  const { db } = services;
  if (!(await clients.clientExists(db, clientId))) throw new UsageError(`no client with id "${clientId}"`);
  for (const resource of resources) {
    const canonical = canonicalResource(resource);
    if (canonical !== resource || !resource.startsWith("https://")) throw new UsageError(`"${resource}" is not an https resource written canonically${canonical ? ` (${canonical})` : ""}`);
  }
  if (flags.all || resources.length) {
    await clients.replaceClientResources(db, clientId, flags.all ? [] : resources);
    await audit(services, "clients resources", { resources: flags.all ? "any" : [...new Set(resources)] }, { clientId });
  }
  const list = await clients.listClientResources(db, clientId);
  return {
    lines: list.length ? [`client ${clientId} may ask for these resources (and ours):`, ...list.map((r) => `  ${r}`)] : [`client ${clientId} may ask for any https resource the person consents to`],
    json: { clientId, resources: list.length ? list : "any" },
  };
}

async function exportOpenApi(services: AdminServices, args: string[]): Promise<CommandResult> {
  if (args.length > 1) throw new UsageError("openapi export takes at most one file name");
  const text = `${JSON.stringify(await services.exportOpenApi(), null, 2)}\n`;
  await audit(services, "openapi export", { file: args[0] ?? null });
  if (!args[0]) return { lines: [text.trimEnd()], json: JSON.parse(text) };
  services.writeFile(args[0], text);
  return { lines: [`wrote ${args[0]}`], json: { file: args[0] } };
}

export const adminCommands: Record<string, Command | undefined> = {
  "clients list": listClients,
  "clients disable": setClientDisabled(true),
  "clients enable": setClientDisabled(false),
  "clients resources": clientResources,
  "keys rotate": rotateKeys,
  "users ban": banUser,
  "users unban": unbanUser,
  "sessions list": listSessions,
  "sessions revoke": revokeSessions,
  "openapi export": exportOpenApi,
};
