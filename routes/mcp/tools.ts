import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { Kysely } from "kysely";
import { listIdentities } from "../../plugins/bap-identity/store.js";
import { backupStatus } from "../../plugins/backup/service.js";
import { listAuthorizedApps } from "../../plugins/oauth-store/grants.js";
import { MACHINE_SCOPES } from "../../plugins/machine-clients/index.js";
import type { Database } from "../../lib/db/tables.js";

/**
 * The tools of our own MCP server (routes/mcp/mcp.ts): read-only views of the person an access
 * token speaks for, each the same data the account's own API answers. Built per request for
 * that person, so no tool can reach anyone else's rows.
 */
export interface McpCaller {
  /** The person the token speaks for; null for a machine client's own token (client credentials). */
  userId: string | null;
  /** The BAP identity the grant speaks for (the token's `bap_id`), if it names one. */
  bapId: string | null;
  /** The scopes the token was granted: a tool is there only when its scope is one of them. */
  scopes: readonly string[];
}

export const MCP_TOOLS = ["list_bap_identities", "backup_status", "list_authorized_apps", "service_info"] as const;
/** The tools about a person: never listed for a machine caller, whatever its scopes. */
const PERSONAL_TOOLS = new Set<(typeof MCP_TOOLS)[number]>(["list_bap_identities", "backup_status", "list_authorized_apps"]);

/**
 * The scope each tool needs, the same the account's own data asks for elsewhere: identities and
 * apps are profile data (userinfo releases the BAP identity under `profile`), the backup's
 * status is `backup:read` (the backup routes' scope). A tool whose scope the token lacks is not
 * listed, and calling it is an error.
 */
export const MCP_TOOL_SCOPES: Record<(typeof MCP_TOOLS)[number], string> = {
  list_bap_identities: "profile",
  backup_status: "backup:read",
  list_authorized_apps: "profile",
  service_info: MACHINE_SCOPES.service,
};

/** What `service_info` tells: public facts about this server, the same for every caller. */
export interface ServiceFacts {
  issuer: string;
  resource: string;
}

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

/** Tool output both as structured content and as its JSON text (for clients that read text only). */
function result(structured: Record<string, unknown>) {
  return { structuredContent: structured, content: [{ type: "text" as const, text: JSON.stringify(structured) }] };
}

export function mcpServer(db: Kysely<Database>, caller: McpCaller, facts: ServiceFacts): McpServer {
  const userId = caller.userId ?? "";
  const server = new McpServer({ name: "identity", version: "1.0.0" });
  const registered = {} as Record<(typeof MCP_TOOLS)[number], ReturnType<McpServer["registerTool"]>>;
  registered[MCP_TOOLS[0]] = server.registerTool(
    MCP_TOOLS[0],
    { title: "BAP identities", description: "The BAP identities registered to your account, the primary one first.", annotations: READ_ONLY },
    async () => {
      const rows = await listIdentities(db, userId);
      return result({
        identities: rows.map((r) => ({
          bapId: r.bapId,
          name: r.name,
          primary: r.isPrimary,
          rootAddress: r.rootAddress,
          currentAddress: r.currentAddress,
          suspended: r.suspendedAt !== null,
          registeredAt: r.createdAt.toISOString(),
        })),
      });
    },
  );
  registered[MCP_TOOLS[1]] = server.registerTool(
    MCP_TOOLS[1],
    { title: "Backup status", description: "Whether the identity this grant speaks for has an encrypted backup stored here, and its linked recovery accounts.", annotations: READ_ONLY },
    async () => result({ ...(await backupStatus(db, { userId, referenceId: caller.bapId, via: "oauth" })) }),
  );
  registered[MCP_TOOLS[2]] = server.registerTool(
    MCP_TOOLS[2],
    { title: "Authorized apps", description: "The applications you have authorized, most recently updated first.", annotations: READ_ONLY },
    async () => result({ apps: await listAuthorizedApps(db, userId) }),
  );
  registered[MCP_TOOLS[3]] = server.registerTool(
    MCP_TOOLS[3],
    { title: "Service information", description: "This server's issuer, this MCP resource and the tools each kind of caller may use. Nothing of anyone's account.", annotations: READ_ONLY },
    async () =>
      result({
        issuer: facts.issuer,
        resource: facts.resource,
        discovery: `${facts.issuer}/.well-known/oauth-authorization-server`,
        tools: MCP_TOOLS.map((name) => ({ name, scope: MCP_TOOL_SCOPES[name], machineCallers: !PERSONAL_TOOLS.has(name) })),
      }),
  );
  // A tool is listed when the token has its scope; a machine caller (no person) never gets a personal one.
  for (const name of MCP_TOOLS) {
    if (!caller.scopes.includes(MCP_TOOL_SCOPES[name]) || (caller.userId === null && PERSONAL_TOOLS.has(name))) registered[name].disable();
  }
  return server;
}
