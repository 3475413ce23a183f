import { Hono } from "hono";
import { callAuth, readForm } from "../form-replay.js";
import type { PageContext, PageEnv } from "../page-env.js";
import { redirectWith } from "../render.js";
import { AccountTable, PostButton } from "./account-table.js";
import { describeUserAgent, Section, When } from "./format.js";
import { accountForm, backWithError, replayThenBack } from "./outcome.js";
import type { SessionRow } from "../../../plugins/accounts/store.js";

/** Where the person is signed in: each session, signing one out, or every other one. */
export function SessionsSection(props: { sessions: SessionRow[]; currentSessionId: string }) {
  const others = props.sessions.filter((s) => s.id !== props.currentSessionId);
  return (
    <Section id="sessions" title="Where you are signed in">
      <AccountTable columns={["Device", "Signed in", "Last active"]} actions="Action">
        {props.sessions.map((s) => {
          const device = describeUserAgent(s.userAgent);
          const current = s.id === props.currentSessionId;
          return (
            <tr data-session-id={s.id}>
              <td>
                {device}
                {s.ipAddress ? <span class="muted"> · {s.ipAddress}</span> : null}
                {current ? <strong> (this device)</strong> : null}
              </td>
              <td>
                <When at={s.createdAt} />
              </td>
              <td>
                <When at={s.updatedAt} />
              </td>
              <td>
                {current ? (
                  <PostButton action="/account/sign-out" text="Sign out" />
                ) : (
                  <PostButton action="/account/sessions/revoke" fields={{ session_id: s.id }} text="Sign out" label={`Sign out ${device}, signed in ${s.createdAt.toISOString().slice(0, 16)}`} />
                )}
              </td>
            </tr>
          );
        })}
      </AccountTable>
      {others.length ? <PostButton action="/account/sessions/revoke-others" text="Sign out all other sessions" block /> : null}
    </Section>
  );
}

const signOut = async (c: PageContext) => redirectWith(await callAuth(c, "/sign-out", {}), "/sign-in");

async function revokeSession(c: PageContext) {
  const id = (await readForm(c)).session_id ?? "";
  // The form names a session by id, and so does /revoke-session (plugins/account-email): no token reaches the page.
  if (!id) return backWithError(null, "sessions", "NOT_FOUND");
  if (id === c.var.session.session.id) return signOut(c);
  return replayThenBack(c, "/revoke-session", { id }, "session-revoked", "sessions");
}

const revokeOtherSessions = (c: PageContext) => replayThenBack(c, "/revoke-other-sessions", {}, "other-sessions-revoked", "sessions");

/** Mounted at /account. */
export const sessionRoutes = new Hono<PageEnv>()
  .post("/sign-out", ...accountForm, signOut)
  .post("/sessions/revoke", ...accountForm, revokeSession)
  .post("/sessions/revoke-others", ...accountForm, revokeOtherSessions);
