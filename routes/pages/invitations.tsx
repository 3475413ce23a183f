import { Hono, type Context } from "hono";
import type { Kysely } from "kysely";
import { asDate } from "../../lib/db.js";
import { accountActions } from "./account/actions.js";
import { When } from "./account/format.js";
import { ErrorNote, Layout } from "./layout.js";
import type { PageKit } from "./page-kit.js";
import { signInThenBack } from "./return-to.js";

/**
 * /invitations/<id>: the page an invitation e-mail links to (plugins/organizations). The id is
 * opaque and was sent only to the invited address, so holding it is what lets a person whose
 * address is not verified accept (better-auth's rule); the account must still have that address.
 */
interface InvitationDetails {
  id: string;
  email: string;
  role: string;
  status: string;
  expiresAt: Date;
  organizationName: string;
  inviterName: string | null;
  inviterEmail: string | null;
}

export async function findInvitation(db: Kysely<any>, id: string): Promise<InvitationDetails | null> {
  const row = await db
    .selectFrom("invitation")
    .innerJoin("organization", "organization.id", "invitation.organizationId")
    .leftJoin("user", "user.id", "invitation.inviterId")
    .select(["invitation.id", "invitation.email", "invitation.role", "invitation.status", "invitation.expiresAt", "organization.name as organizationName", "user.name as inviterName", "user.email as inviterEmail"])
    .where("invitation.id", "=", id)
    .executeTakeFirst();
  if (!row) return null;
  return { ...row, role: row.role ?? "member", expiresAt: asDate(row.expiresAt) } as InvitationDetails;
}

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

export function invitationRoutes(kit: PageKit, db: Kysely<any>) {
  const app = new Hono();
  const act = accountActions(kit);

  app.get("/:id", async (c) => {
    const [invitation, session] = await Promise.all([findInvitation(db, c.req.param("id")), kit.auth.api.getSession({ headers: c.req.raw.headers })]);
    return kit.html(c, <InvitationPage invitation={invitation} signedInAs={session?.user.email ?? null} />, invitation ? 200 : 404);
  });

  async function answer(c: Context, accept: boolean) {
    const id = c.req.param("id") ?? "";
    if (!kit.sameOrigin(c)) return kit.html(c, <InvitationPage invitation={null} signedInAs={null} error="This form must be sent from our own page." />, 403);
    const session = await kit.auth.api.getSession({ headers: c.req.raw.headers });
    if (!session) return kit.redirectWith(null, signInThenBack(`/invitations/${encodeURIComponent(id)}`));
    const upstream = await kit.callAuth(c, accept ? "/organization/accept-invitation" : "/organization/reject-invitation", { invitationId: id });
    return upstream.ok ? act.done(upstream, accept ? "invitation-accepted" : "invitation-declined", "organizations") : act.failed(upstream, "organizations");
  }
  app.post("/:id/accept", (c) => answer(c, true));
  app.post("/:id/decline", (c) => answer(c, false));

  return app;
}
