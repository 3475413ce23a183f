import { AccountTable, PostButton } from "./account-table.js";
import { Section, When } from "./format.js";
import type { Membership, OrganizationInvitation, OrganizationMember, ReceivedInvitation } from "../../../plugins/accounts/store.js";

/** better-auth's built-in organization roles; the creator is `owner`, an invitee defaults to `member`. */
export const ORGANIZATION_ROLES = ["member", "admin", "owner"] as const;

const roles = (role: string) => role.split(",").map((r) => r.trim());
/** Owners and admins manage members and invitations (better-auth's default access control decides). */
export const canManage = (role: string) => roles(role).some((r) => r === "owner" || r === "admin");

function RoleOptions(props: { selected: string; includeOwner: boolean }) {
  return (
    <>
      {ORGANIZATION_ROLES.filter((r) => r !== "owner" || props.includeOwner).map((r) => (
        <option value={r} selected={r === props.selected}>
          {r}
        </option>
      ))}
    </>
  );
}

export interface OrganizationsView {
  memberships: Membership[];
  members: OrganizationMember[];
  invitations: OrganizationInvitation[];
  received: ReceivedInvitation[];
  userId: string;
}

export function OrganizationsSection(props: OrganizationsView) {
  return (
    <Section id="organizations" title="Organizations">
      {props.received.length ? (
        <>
          <h3>Invitations for you</h3>
          <ul>
            {props.received.map((i) => (
              <li data-invitation-id={i.id}>
                {i.organizationName} invites you as {i.role} (until <When at={i.expiresAt} />){" "}
                <PostButton action={`/invitations/${encodeURIComponent(i.id)}/accept`} text="Accept" primary /> <PostButton action={`/invitations/${encodeURIComponent(i.id)}/decline`} text="Decline" />
              </li>
            ))}
          </ul>
        </>
      ) : null}
      {props.memberships.length ? null : <p class="muted">You are not a member of any organization.</p>}
      {props.memberships.map((m) => (
        <Organization membership={m} members={props.members.filter((x) => x.organizationId === m.organizationId)} invitations={props.invitations.filter((x) => x.organizationId === m.organizationId)} userId={props.userId} />
      ))}
      <h3>Create an organization</h3>
      <form method="post" action="/account/organizations/create">
        <label for="org-name">Organization name</label>
        <input id="org-name" name="name" type="text" maxlength={100} required />
        <label for="org-slug">Short name (letters, digits and dashes; optional)</label>
        <input id="org-slug" name="slug" type="text" maxlength={60} pattern="[a-z0-9](?:[a-z0-9-]*[a-z0-9])?" />
        <button type="submit">Create organization</button>
      </form>
    </Section>
  );
}

function Organization(props: { membership: Membership; members: OrganizationMember[]; invitations: OrganizationInvitation[]; userId: string }) {
  const m = props.membership;
  const manage = canManage(m.role);
  const owner = roles(m.role).includes("owner");
  const id = m.organizationId;
  return (
    <article data-organization-id={id} aria-labelledby={`org-${id}-title`}>
      <h3 id={`org-${id}-title`}>
        {m.name} <span class="muted">({m.slug}) · you are {m.role}</span>
      </h3>
      <AccountTable columns={["Member", "Role"]}>
        {props.members.map((member) => (
            <tr data-member-email={member.email}>
              <td>
                {member.name} <span class="muted">{member.email}</span>
              </td>
              <td>
                {manage && member.userId !== props.userId ? (
                  <form method="post" action="/account/organizations/role" class="inline">
                    <input type="hidden" name="organization_id" value={id} />
                    <input type="hidden" name="member_id" value={member.id} />
                    <label for={`role-${member.id}`}>Role of {member.email}</label>
                    <select id={`role-${member.id}`} name="role">
                      <RoleOptions selected={member.role} includeOwner={owner} />
                    </select>
                    <button type="submit" class="secondary">
                      Change role
                    </button>
                  </form>
                ) : (
                  member.role
                )}
              </td>
            </tr>
        ))}
      </AccountTable>
      {manage && props.invitations.length ? (
        <>
          <h3>Pending invitations</h3>
          <ul>
            {props.invitations.map((i) => (
              <li data-invitation-id={i.id}>
                {i.email} as {i.role} (pending until <When at={i.expiresAt} />){" "}
                <PostButton action="/account/organizations/cancel-invitation" fields={{ invitation_id: i.id }} text="Cancel" label={`Cancel the invitation to ${i.email}`} />
              </li>
            ))}
          </ul>
        </>
      ) : null}
      {manage ? (
        <form method="post" action="/account/organizations/invite">
          <input type="hidden" name="organization_id" value={id} />
          <label for={`invite-email-${id}`}>Invite by e-mail</label>
          <input id={`invite-email-${id}`} name="email" type="email" required />
          <label for={`invite-role-${id}`}>Role</label>
          <select id={`invite-role-${id}`} name="role">
            <RoleOptions selected="member" includeOwner={owner} />
          </select>
          <button type="submit">Send invitation</button>
        </form>
      ) : null}
      <PostButton action="/account/organizations/leave" fields={{ organization_id: id }} text="Leave organization" label={`Leave organization ${m.name}`} block />
    </article>
  );
}
