import { organization } from "better-auth/plugins";
import type { Mailer } from "../../lib/mailer.js";

export interface OrganizationsOptions {
  /** Sends the invitation e-mail (lib/mailer.ts). */
  send: Mailer;
  /** The page an invitee opens to accept or decline: our /invitations/<id>. */
  invitationUrl: (invitationId: string) => string;
  /**
   * How long an invitation stays open, in seconds.
   * @default 172800 (48 hours, better-auth's default)
   */
  invitationExpiresIn?: number;
}

/**
 * better-auth's organization plugin with our invitation mail. Spec defaults hold as better-auth
 * has them: an Invitation starts `pending`, a Member's role is `member`, the creator is `owner`.
 *
 * The invitation id in the link is opaque and random (better-auth's default id generation), and
 * it is sent only to the invited address, so opening the link is the proof that the invitee reads
 * that mailbox: better-auth then lets them accept without a verified e-mail on the account.
 */
export function organizations(options: OrganizationsOptions) {
  return organization({
    invitationExpiresIn: options.invitationExpiresIn ?? 48 * 60 * 60,
    async sendInvitationEmail({ id, email, role, organization: org, inviter }) {
      const who = inviter.user.name ? `${inviter.user.name} (${inviter.user.email})` : inviter.user.email;
      await options.send({
        to: email,
        subject: `You are invited to join ${org.name}`,
        text: `${who} invited you to join ${org.name} as ${role}.\n\nAccept or decline: ${options.invitationUrl(id)}\n\nIf you did not expect this, ignore this message.`,
      });
    },
  });
}
