import { BASE_PATH } from "../../../lib/transport.js";
import type { SessionWithUser } from "../../session.js";
import { listAuthorizedApps } from "../../authorized-apps.js";
import { passkeyScript } from "../assets.js";
import type { PageDeps } from "../page-env.js";
import type { AccountView } from "./account-page.js";
import { loadAgentAccess } from "./agents.js";
import { errorWords, noticeWords } from "./messages.js";
import {
  findTwoFactorEnabled,
  listActiveSessions,
  listBapIdentities,
  listInvitationsFor,
  listLinkedAccounts,
  listMemberships,
  listOrganizationMembers,
  listPasskeys,
  listPendingInvitations,
} from "./queries.js";
import { canManage } from "./organizations-section.js";
import { KEY_SIGN_IN_TWO_FACTOR_ID } from "../../../plugins/key-sign-in/two-factor.js";

/** Everything the account page shows for the signed-in person, read in parallel. */
export async function loadAccountView(deps: PageDeps, session: SessionWithUser, search: URLSearchParams): Promise<AccountView> {
  const { db } = deps;
  const user = session.user;
  const [sessions, accounts, passkeys, twoFactor, identities, apps, memberships, received, agents, script] = await Promise.all([
    listActiveSessions(db, user.id),
    listLinkedAccounts(db, user.id),
    listPasskeys(db, user.id),
    findTwoFactorEnabled(db, user.id),
    listBapIdentities(db, user.id),
    listAuthorizedApps(db, user.id),
    listMemberships(db, user.id),
    // Invitations by address only for a verified address (see listInvitationsFor); otherwise the e-mailed link is the way in.
    user.emailVerified ? listInvitationsFor(db, user.email) : Promise.resolve([]),
    loadAgentAccess(db, user.id),
    passkeyScript().catch((err: unknown) => {
      deps.logger?.error("passkey script build failed", { err });
      return null;
    }),
  ]);
  const orgIds = memberships.map((m) => m.organizationId);
  const managed = memberships.filter((m) => canManage(m.role)).map((m) => m.organizationId);
  const [members, invitations] = await Promise.all([listOrganizationMembers(db, orgIds), listPendingInvitations(db, managed)]);
  return {
    user: { id: user.id, name: user.name, email: user.email, emailVerified: Boolean(user.emailVerified) },
    currentSessionId: session.session.id,
    sessions,
    accounts,
    providers: deps.socialProviders,
    passkeys,
    passkeyControls: { basePath: BASE_PATH, scriptSrc: script?.path ?? null },
    twoFactorEnabled: twoFactor,
    // plugins/key-sign-in/two-factor.ts is installed unless KEY_SIGN_IN_SKIPS_TWO_FACTOR.
    keySignInAsksSecondFactor: deps.auth.options.plugins.some((p) => p.id === KEY_SIGN_IN_TWO_FACTOR_ID),
    identities,
    apps,
    organizations: { memberships, members, invitations, received },
    agents,
    notice: noticeWords(search.get("notice")),
    error: errorWords(deps.auth, search.get("error")),
  };
}
