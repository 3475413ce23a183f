import { callAuth, upstreamError } from "../form-replay.js";
import { ownPagesOnly, signInFirst, type PageContext } from "../page-env.js";
import { redirectWith } from "../render.js";
import { signInThenBack } from "../return-to.js";
import type { NoticeKey } from "./messages.js";

/**
 * How every account-page form ends (post/redirect/get): one better-auth call (or named query),
 * then back to its section of /account with a notice or an error code (messages.ts).
 */
export const ACCOUNT_PATH = "/account";

/** What an account form needs before its handler runs: our own page, and a session (else sign in and come back). */
export const accountForm = [ownPagesOnly, signInFirst(() => ACCOUNT_PATH)] as const;

const back = (query: string, anchor: string) => `${ACCOUNT_PATH}?${query}#${anchor}`;

/** Back to the account page with a notice, carrying `upstream`'s cookies. */
export function backWithNotice(upstream: Response | null, notice: NoticeKey, anchor: string): Response {
  return redirectWith(upstream, back(`notice=${notice}`, anchor));
}

/** Back to the account page with the error code better-auth (or we) gave. */
export async function backWithError(upstream: Response | null, anchor: string, code?: string): Promise<Response> {
  const given = code ?? (upstream ? (await upstreamError(upstream)).code : null);
  // The session ended meanwhile: sign in, then come back.
  if (upstream?.status === 401 && (!given || given === "UNAUTHORIZED")) return redirectWith(upstream, signInThenBack(ACCOUNT_PATH));
  const reason = given ?? (upstream?.status === 429 ? "RATE_LIMITED" : upstream?.status === 404 ? "NOT_FOUND" : "FAILED");
  // better-auth's codes are upper-case identifiers; anything else is not passed on.
  return redirectWith(upstream, back(`error=${/^[A-Z0-9_]{1,100}$/.test(reason) ? reason : "FAILED"}`, anchor));
}

/** better-auth's answer, back on the account page: the notice when it agreed, its error code when not. */
export function backToAccount(upstream: Response, notice: NoticeKey, anchor: string): Promise<Response> | Response {
  return upstream.ok ? backWithNotice(upstream, notice, anchor) : backWithError(upstream, anchor);
}

/** Replay a form as a better-auth call, then back to the account page. */
export async function replayThenBack(c: PageContext, path: string, body: Record<string, unknown>, notice: NoticeKey, anchor: string): Promise<Response> {
  return backToAccount(await callAuth(c, path, body), notice, anchor);
}

/** The outcome of a named query that says yes or no: the notice, or `code`. */
export function backWith(ok: boolean, notice: NoticeKey, anchor: string, code = "NOT_FOUND"): Promise<Response> | Response {
  return ok ? backWithNotice(null, notice, anchor) : backWithError(null, anchor, code);
}
