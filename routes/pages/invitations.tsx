import { Hono, type MiddlewareHandler } from "hono";
import { findInvitation, type InvitationDetails } from "../../plugins/core-store/organizations.js";
import { sameOriginOnly } from "../middleware.js";
import type { SessionWithUser } from "../session.js";
import { When } from "./account/format.js";
import { backToAccount } from "./account/outcome.js";
import { callAuth } from "./form-replay.js";
import { ErrorNote, Layout } from "./layout.js";
import { signInFirst, withSession, type PageContext, type PageEnv } from "./page-env.js";
import { html } from "./render.js";
import { signInThenBack } from "./return-to.js";

/**
 * /invitations/<id>: the page an invitation e-mail links to (plugins/organizations). The id is
 * opaque and was sent only to the invited address, so holding it is what lets a person whose
 * address is not verified accept (better-auth's rule); the account must still have that address.
 */
function InvitationPage(props: { invitation: InvitationDetails | null; signedInAs: string | null; error?: string | null }) {
  const inv = props.invitation;
  const open = inv && inv.status === "pending" && inv.expiresAt.getTime() > Date.now();
  const path = inv ? `/invitations/${encodeURIComponent(inv.id)}` : "/";
  return (
    <Layout title="Invitation">
      <h1>{open ? `Join ${inv.organizationName}` : "Invitation"}</h1>
      <ErrorNote message={props.error} />
      {!inv || !open ? (
        <p>This invitation is no longer open. Ask whoever invited you to send a new one.</p>
      ) : (
        <>
          <p>
            {inv.inviterName ?? inv.inviterEmail ?? "Someone"} invited <strong>{inv.email}</strong> to join <strong>{inv.organizationName}</strong> as {inv.role}. The invitation is open until <When at={inv.expiresAt} />.
          </p>
          {!props.signedInAs ? (
            <p>
              <a href={signInThenBack(path)}>Sign in</a> with that e-mail address to answer it. No account yet? <a href="/sign-up">Create one</a> with that address, then open this link again.
            </p>
          ) : props.signedInAs.toLowerCase() !== inv.email.toLowerCase() ? (
            <p>You are signed in as {props.signedInAs}. Sign out, then sign in as {inv.email} to answer this invitation.</p>
          ) : (
            <div class="row">
              <form method="post" action={`${path}/accept`}>
                <button type="submit">Accept</button>
              </form>
              <form method="post" action={`${path}/decline`}>
                <button type="submit" class="secondary">
                  Decline
                </button>
              </form>
            </div>
          )}
        </>
      )}
    </Layout>
  );
}

async function showInvitation(c: PageContext) {
  const invitation = await findInvitation(c.var.page.db, c.req.param("id") ?? "");
  const session: SessionWithUser | undefined = c.get("session");
  return html(c, <InvitationPage invitation={invitation} signedInAs={session?.user.email ?? null} />, invitation ? 200 : 404);
}

/** Accept or decline: better-auth's organization plugin checks the invitee, then back to the account page. */
function answer(accept: boolean) {
  return async (c: PageContext) => {
    const upstream = await callAuth(c, accept ? "/organization/accept-invitation" : "/organization/reject-invitation", { invitationId: c.req.param("id") ?? "" });
    return backToAccount(upstream, accept ? "invitation-accepted" : "invitation-declined", "organizations");
  };
}

/** A foreign form gets the invitation page's own refusal, not the generic error page. */
const ownInvitationPagesOnly: MiddlewareHandler<PageEnv> = (c, next) =>
  sameOriginOnly<PageEnv>(c.var.page.authUrl, (c) => html(c, <InvitationPage invitation={null} signedInAs={null} error="This form must be sent from our own page." />, 403))(c, next);
const signedInToAnswer = signInFirst((c) => `/invitations/${encodeURIComponent(c.req.param("id") ?? "")}`);

export const invitationRoutes = new Hono<PageEnv>()
  .get("/:id", withSession, showInvitation)
  .post("/:id/accept", ownInvitationPagesOnly, signedInToAnswer, answer(true))
  .post("/:id/decline", ownInvitationPagesOnly, signedInToAnswer, answer(false));
