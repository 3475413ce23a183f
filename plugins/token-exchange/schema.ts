import type { BetterAuthPluginDBSchema } from "@better-auth/core/db";

/**
 * The delegated access tokens issued by token exchange (RFC 8693), one row each (plugins/oauth-store/exchanges.ts).
 * The tokens themselves are RFC 9068 JWTs and are not stored; the row is what lets the grant
 * they came from end them: a token whose row is gone is inactive at introspection and at our
 * resources, however long its `exp` still runs.
 */
export const tokenExchangeSchema = {
  oauthTokenExchange: {
    fields: {
      /** The person the token speaks for (`sub`). */
      userId: { type: "string", required: true, references: { model: "user", field: "id", onDelete: "cascade" }, index: true },
      /** The agent it was issued to, the outermost actor (`act.sub`, `client_id`). */
      agentClientId: { type: "string", required: true },
      /** The app whose grant it came from: the client of the first, non-delegated subject token. */
      grantClientId: { type: "string", required: true },
      /** Its `exp`; a row past it is dead weight. */
      expiresAt: { type: "date", required: true },
      createdAt: { type: "date", required: true },
    },
  },
} satisfies BetterAuthPluginDBSchema;
