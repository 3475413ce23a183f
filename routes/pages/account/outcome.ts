import type { Context } from "hono";
import type { SessionWithUser } from "../../session.js";
import { ErrorPage } from "../consent.js";
import { upstreamError, type PageKit } from "../page-kit.js";
import { signInThenBack } from "../return-to.js";
import type { NoticeKey } from "./messages.js";

/**
 * The steps every account-page form shares: a same-origin check, a session, one better-auth
 * call (or named query), then a redirect back to the section with a notice or an error code.
 */
export interface AccountActions {
  /** Same-origin post by a signed-in person: the session, or the response that refuses. */
  guard(c: Context): Promise<SessionWithUser | Response>;
  /** Back to the account page with a notice, carrying `upstream`'s cookies. */
  done(upstream: Response | null, notice: NoticeKey, anchor: string): Response;
  /** Back to the account page with the error code better-auth (or we) gave. */
  failed(upstream: Response | null, anchor: string, code?: string): Promise<Response>;
  /** Replay a form as a better-auth call, then done() or failed(). */
  replay(c: Context, path: string, body: Record<string, unknown>, notice: NoticeKey, anchor: string): Promise<Response>;
}

export const ACCOUNT_PATH = "/account";

export function accountActions(kit: PageKit): AccountActions {
  const back = (query: string, anchor: string) => `${ACCOUNT_PATH}?${query}#${anchor}`;

  const actions: AccountActions = {
    async guard(c) {
      if (!kit.sameOrigin(c)) return kit.html(c, <ErrorPage error="invalid_request" description="This form must be sent from our own page." />, 403);
      const session = await kit.auth.api.getSession({ headers: c.req.raw.headers });
      return session ?? kit.redirectWith(null, signInThenBack(ACCOUNT_PATH));
    },
    done(upstream, notice, anchor) {
      return kit.redirectWith(upstream, back(`notice=${notice}`, anchor));
    },
    async failed(upstream, anchor, code) {
      const given = code ?? (upstream ? (await upstreamError(upstream)).code : null);
      // The session ended meanwhile: sign in, then come back.
      if (upstream?.status === 401 && (!given || given === "UNAUTHORIZED")) return kit.redirectWith(upstream, signInThenBack(ACCOUNT_PATH));
      const reason = given ?? (upstream?.status === 429 ? "RATE_LIMITED" : upstream?.status === 404 ? "NOT_FOUND" : "FAILED");
      // better-auth's codes are upper-case identifiers; anything else is not passed on.
      return kit.redirectWith(upstream, back(`error=${/^[A-Z0-9_]{1,100}$/.test(reason) ? reason : "FAILED"}`, anchor));
    },
    async replay(c, path, body, notice, anchor) {
      const upstream = await kit.callAuth(c, path, body);
      return upstream.ok ? actions.done(upstream, notice, anchor) : actions.failed(upstream, anchor);
    },
  };
  return actions;
}
