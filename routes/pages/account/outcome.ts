import { callAuth, upstreamError } from "../form-replay.js";
import { ownPagesOnly, signInFirst, type PageContext } from "../page-env.js";
import { redirectWith } from "../render.js";
import { signInThenBack } from "../return-to.js";
import type { NoticeKey } from "./messages.js";
import { ACCOUNT_PATH, pageOfSection, type SectionId } from "./pages.js";

/**
 * How every account form ends (post/redirect/get): one better-auth call (or named query), then
 * back to its section, on the account page that holds it (pages.ts), with a notice or an error
 * code (messages.ts).
 */

/** What an account form needs before its handler runs: our own page, and a session (else sign in and come back). */
export const accountForm = [ownPagesOnly, signInFirst(() => ACCOUNT_PATH)] as const;

/** A section's place on its page with an outcome: `/account/<page>?<query>#<section>`. */
export const outcomeHref = (anchor: SectionId, query: string) => `${pageOfSection(anchor)}?${query}#${anchor}`;
const back = (query: string, anchor: SectionId) => outcomeHref(anchor, query);

/** Back to the section's page with a notice, carrying `upstream`'s cookies. */
export function backWithNotice(upstream: Response | null, notice: NoticeKey, anchor: SectionId): Response {
  return redirectWith(upstream, back(`notice=${notice}`, anchor));
}

/** Back to the section's page with the error code better-auth (or we) gave. */
export async function backWithError(upstream: Response | null, anchor: SectionId, code?: string): Promise<Response> {
  const given = code ?? (upstream ? (await upstreamError(upstream)).code : null);
  // The session ended meanwhile: sign in, then come back.
  if (upstream?.status === 401 && (!given || given === "UNAUTHORIZED")) return redirectWith(upstream, signInThenBack(pageOfSection(anchor)));
  const reason = given ?? (upstream?.status === 429 ? "RATE_LIMITED" : upstream?.status === 404 ? "NOT_FOUND" : "FAILED");
  // better-auth's codes are upper-case identifiers; anything else is not passed on.
  return redirectWith(upstream, back(`error=${/^[A-Z0-9_]{1,100}$/.test(reason) ? reason : "FAILED"}`, anchor));
}

/** better-auth's answer, back on the account page: the notice when it agreed, its error code when not. */
export function backToAccount(upstream: Response, notice: NoticeKey, anchor: SectionId): Promise<Response> | Response {
  return upstream.ok ? backWithNotice(upstream, notice, anchor) : backWithError(upstream, anchor);
}

/** Replay a form as a better-auth call, then back to the account page. */
export async function replayThenBack(c: PageContext, path: string, body: Record<string, unknown>, notice: NoticeKey, anchor: SectionId): Promise<Response> {
  return backToAccount(await callAuth(c, path, body), notice, anchor);
}

/** The outcome of a named query that says yes or no: the notice, or `code`. */
export function backWith(ok: boolean, notice: NoticeKey, anchor: SectionId, code = "NOT_FOUND"): Promise<Response> | Response {
  return ok ? backWithNotice(null, notice, anchor) : backWithError(null, anchor, code);
}
