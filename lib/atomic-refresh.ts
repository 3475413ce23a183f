import { AUTH_PATHS } from "./auth-endpoints.js";
import type { EdgeHandler } from "./auth-request.js";
import type { DatabaseHandle } from "./db/connection.js";
import { ServiceUnavailable, UNAVAILABLE_RETRY_AFTER } from "./errors.js";

/**
 * A refresh-token grant at the token endpoint runs as one database transaction
 * (Database.atomically). @better-auth/oauth-provider rotates a refresh token in several
 * statements (mark the old one rotated, insert the new refresh token, insert the access token,
 * store the replay answer); if the database dropped between them, the old token was spent
 * while the client got a 503, and its retry looked like reuse and ended the whole grant. Now
 * every write of the rotation commits, or none does: an answer below 500 commits (a 400 for
 * reuse keeps the family's revocation), a 5xx or a throw rolls back, and a commit that fails
 * answers 503 with the old token still valid for the retry. A concurrent second use of the
 * same token waits on the first one's row lock (PostgreSQL) or on the single connection
 * (SQLite), then finds it rotated, as before.
 *
 * On PostgreSQL the authorization-code grant runs as one transaction too: its refresh-token and
 * access-token inserts commit together, one WAL flush instead of one each (each flush was the
 * longest wait of a code exchange, 1-5 ms on a slow disk), and a failure between them leaves
 * neither. On SQLite a commit flushes nothing (WAL, `synchronous = NORMAL`), and the
 * transaction would hold the only connection through the ID token's signature: there the
 * inserts commit one by one, as oauth-provider writes them.
 */
export function withAtomicRefresh(handler: EdgeHandler, database: DatabaseHandle): EdgeHandler {
  const atomicGrants = new Set(database.type === "postgres" ? ["refresh_token", "authorization_code"] : ["refresh_token"]);
  return async function atomicRefreshHandler(req, edge) {
    if (req.method !== "POST" || edge.path !== AUTH_PATHS.token || edge.grantType === null || !atomicGrants.has(edge.grantType)) return handler(req, edge);
    try {
      return await database.atomically(() => handler(req, edge), (res) => res.status < 500);
    } catch (err) {
      // The commit did not go through (the handler's own errors are answered inside it).
      if (!(err instanceof ServiceUnavailable)) throw err;
      return new Response(null, { status: 503, headers: { "retry-after": String(UNAVAILABLE_RETRY_AFTER) } });
    }
  };
}
