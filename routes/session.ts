import type { Auth } from "../auth.config.js";
import { problems } from "../lib/errors.js";

export type SessionWithUser = NonNullable<Awaited<ReturnType<Auth["api"]["getSession"]>>>;

/** better-auth's own session lookup (cookie or bearer session token); no second session system. */
export async function findSession(auth: Auth, headers: Headers): Promise<SessionWithUser | null> {
  return auth.api.getSession({ headers });
}

export async function requireSession(auth: Auth, headers: Headers): Promise<SessionWithUser> {
  const session = await findSession(auth, headers);
  if (!session) throw problems.unauthorized("Sign in first.");
  return session;
}
