import type { Child } from "hono/jsx";
import { BASE_PATH } from "../../../lib/mount-paths.js";
import { findTwoFactorEnabled, listActiveSessions, listInvitationsFor, listMemberships, listOrganizationMembers, listPasskeys, listPendingInvitations } from "../../../plugins/accounts/store.js";
import { KEY_SIGN_IN_TWO_FACTOR_ID } from "../../../plugins/key-sign-in/two-factor.js";
import { listActingAgents } from "../../../plugins/oauth-store/exchanges.js";
import { listAuthorizedApps } from "../../../plugins/oauth-store/grants.js";
import { passkeyScript, walletConnectScript } from "../assets.js";
import { AgentAccessSection, loadAgentAccess } from "./agents.js";
import { AppsSection } from "./apps.js";
import { ApprovalsSection, loadPendingApprovals } from "./approvals.js";
import { IdentitiesSection } from "./identities.js";
import { LinkedAccountsSection } from "./linked-accounts.js";
import { bapIdentitiesOf, linkedAccountsOf, loadNfts, loadSubscription, orNull, walletsOf, type SectionContext } from "./load.js";
import { canManage, OrganizationsSection } from "./organizations-section.js";
import type { SectionId } from "./pages.js";
import { PasskeysSection } from "./passkeys.js";
import { ProfileSection } from "./profile.js";
import { SessionsSection } from "./sessions.js";
import { SubscriptionSection } from "./subscription.js";
import { AnalyticsSection, loadAnalyticsSection } from "./analytics.js";
import { BrandingSection, loadBranding } from "./branding.js";
import { SupportSection } from "./support.js";
import { TwoFactorSection } from "./two-factor.js";
import { NftsSection, WalletsSection } from "./wallets.js";

/** One section of an account page: reads what it shows (nothing more), then renders it. */
export type SectionView = (ctx: SectionContext) => Promise<Child>;

/**
 * The view of each section pages.ts places on a page, one line each: a page shows (and reads for)
 * only its own sections. A section of pages.ts without a view here is not shown yet.
 */
export const SECTION_VIEWS: { readonly [id in SectionId]?: SectionView } = {
  profile: async ({ session: { user } }) => <ProfileSection name={user.name} email={user.email} emailVerified={Boolean(user.emailVerified)} />,
  sessions: async ({ deps, session }) => <SessionsSection sessions={await listActiveSessions(deps.db, session.user.id)} currentSessionId={session.session.id} />,
  accounts: async (ctx) => <LinkedAccountsSection accounts={await ctx.once(linkedAccountsOf)} providers={ctx.deps.socialProviders} />,
  passkeys: showPasskeys,
  "two-factor": showTwoFactor,
  identities: async (ctx) => <IdentitiesSection identities={await ctx.once(bapIdentitiesOf)} />,
  wallets: showWallets,
  nfts: async (ctx) => <NftsSection nfts={await loadNfts(ctx)} />,
  apps: showApps,
  agents: async ({ deps, session }) => <AgentAccessSection view={await loadAgentAccess(deps.db, session.user.id)} />,
  approvals: async ({ deps, session }) => <ApprovalsSection approvals={await loadPendingApprovals(deps.db, session.user.id)} />,
  organizations: showOrganizations,
  subscription: async (ctx) => <SubscriptionSection view={await ctx.once(loadSubscription)} />,
  branding: async (ctx) => <BrandingSection view={await loadBranding(ctx.deps, ctx.session.user.id, (await ctx.once(loadSubscription)).tier)} />,
  analytics: async (ctx) => <AnalyticsSection view={await loadAnalyticsSection(ctx.deps, ctx.session.user.id, (await ctx.once(loadSubscription)).tier, ctx.search)} />,
  support: async (ctx) => <SupportSection view={{ tier: (await ctx.once(loadSubscription)).tier, configured: Boolean(ctx.deps.support.email), email: ctx.session.user.email }} />,
};

async function showPasskeys({ deps, session }: SectionContext) {
  const [passkeys, script] = await Promise.all([listPasskeys(deps.db, session.user.id), orNull(deps, "passkey", passkeyScript())]);
  return <PasskeysSection passkeys={passkeys} basePath={BASE_PATH} scriptSrc={script?.path ?? null} />;
}

async function showTwoFactor(ctx: SectionContext) {
  const [enabled, accounts] = await Promise.all([findTwoFactorEnabled(ctx.deps.db, ctx.session.user.id), ctx.once(linkedAccountsOf)]);
  const hasPassword = accounts.some((a) => a.providerId === "credential" && a.hasPassword);
  // plugins/key-sign-in/two-factor.ts is installed unless KEY_SIGN_IN_SKIPS_TWO_FACTOR.
  const keySignInAsks = ctx.deps.auth.options.plugins.some((p) => p.id === KEY_SIGN_IN_TWO_FACTOR_ID);
  return <TwoFactorSection enabled={enabled} hasPassword={hasPassword} keySignInAsks={keySignInAsks} />;
}

async function showWallets(ctx: SectionContext) {
  const [wallets, identities, script] = await Promise.all([ctx.once(walletsOf), ctx.once(bapIdentitiesOf), orNull(ctx.deps, "wallet-connect", walletConnectScript())]);
  return <WalletsSection wallets={wallets} identities={identities} scriptSrc={script?.path ?? null} />;
}

async function showApps({ deps, session }: SectionContext) {
  const [authorized, actingAgents] = await Promise.all([listAuthorizedApps(deps.db, session.user.id), listActingAgents(deps.db, session.user.id)]);
  return <AppsSection apps={authorized.map((app) => ({ ...app, agents: actingAgents.get(app.clientId) ?? [] }))} />;
}

async function showOrganizations({ deps, session: { user } }: SectionContext) {
  const [memberships, received] = await Promise.all([
    listMemberships(deps.db, user.id),
    // Invitations by address only for a verified address (see listInvitationsFor); otherwise the e-mailed link is the way in.
    user.emailVerified ? listInvitationsFor(deps.db, user.email) : Promise.resolve([]),
  ]);
  const managed = memberships.filter((m) => canManage(m.role)).map((m) => m.organizationId);
  const [members, invitations] = await Promise.all([listOrganizationMembers(deps.db, memberships.map((m) => m.organizationId)), listPendingInvitations(deps.db, managed)]);
  return <OrganizationsSection memberships={memberships} members={members} invitations={invitations} received={received} userId={user.id} />;
}

/** The sections of a page that have a view, in the page's order. */
export function shownSections(sections: ReadonlyArray<readonly [SectionId, string]>): Array<readonly [SectionId, string, SectionView]> {
  return sections.flatMap(([id, label]) => {
    const view = SECTION_VIEWS[id];
    return view ? [[id, label, view] as const] : [];
  });
}
