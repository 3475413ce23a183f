import type { BetterAuthPlugin } from "better-auth";
import { createAuthMiddleware } from "better-auth/api";
import { AUTH_PATHS } from "../../lib/auth-endpoints.js";
import { updateClientRow } from "../oauth-store/adapter.js";
import { hookOn } from "../hooks.js";

/**
 * Machine clients: the client credentials grant (RFC 6749 §4.4) for a confidential client acting
 * for itself, with no person behind the token (oauth-provider issues no refresh token and no ID
 * token for it, and an RFC 9068 JWT's `sub` is the client's own id, §2.2).
 *
 * What such a token may do is what `MACHINE_SCOPES` name, and nothing of anyone's account:
 * oauth-provider never gives it `openid`, `profile`, `email` or `offline_access`, and the backup
 * scopes are not machine scopes. `service:read` is the service's public description (the MCP
 * server's `service_info` tool, routes/mcp/tools.ts).
 */
export const MACHINE_SCOPES = { service: "service:read" } as const;
export type MachineScope = (typeof MACHINE_SCOPES)[keyof typeof MACHINE_SCOPES];

/** The scopes a client credentials grant may carry, for every machine client. */
export const MACHINE_SCOPE_LIST: readonly MachineScope[] = Object.values(MACHINE_SCOPES);

interface RegisteredClient {
  client_id?: unknown;
  grant_types?: unknown;
  token_endpoint_auth_method?: unknown;
}

/** A confidential client registered for the client credentials grant. */
export function isMachineClient(client: RegisteredClient): boolean {
  return Array.isArray(client.grant_types) && client.grant_types.includes("client_credentials") && client.token_endpoint_auth_method !== "none";
}

/**
 * oauth-provider lets only an administrator set `client_credentials_scopes`, so a client that
 * registered itself (RFC 7591) for the grant could never use it ("no authorized client_credentials
 * scopes"). Every machine client gets the machine scopes, and only those; oauth-provider has
 * already refused the registration of such a client without a session or an initial access
 * token (open registration, the sandbox, registers no machine clients).
 */
export function machineClients(): BetterAuthPlugin {
  return {
    id: "machine-clients",
    hooks: {
      after: [
        hookOn(
          AUTH_PATHS.register,
          createAuthMiddleware(async (ctx) => {
            const returned = ctx.context.returned as RegisteredClient | undefined;
            if (!returned || returned instanceof Response || typeof returned.client_id !== "string" || !isMachineClient(returned)) return;
            await updateClientRow(ctx.context.adapter, returned.client_id, { clientCredentialsScopes: [...MACHINE_SCOPE_LIST] });
          }),
        ),
      ],
    },
  };
}
