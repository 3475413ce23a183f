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
 */
export function withAtomicRefresh(handler: EdgeHandler, database: DatabaseHandle): EdgeHandler {
  return async function atomicRefreshHandler(req, edge) {
    if (req.method !== "POST" || edge.path !== AUTH_PATHS.token || edge.grantType !== "refresh_token") return handler(req, edge);
    try {
      return await database.atomically(() => handler(req, edge), (res) => res.status < 500);
    } catch (err) {
      // The commit did not go through (the handler's own errors are answered inside it).
      if (!(err instanceof ServiceUnavailable)) throw err;
      return new Response(null, { status: 503, headers: { "retry-after": String(UNAVAILABLE_RETRY_AFTER) } });
    }
  };
}
