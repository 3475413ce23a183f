import { BASE_PATH } from "../../../lib/mount-paths.js";
import type { SessionWithUser } from "../../session.js";
import { listAuthorizedApps } from "../../../plugins/oauth-store/grants.js";
import { listActingAgents } from "../../../plugins/oauth-store/exchanges.js";
import { passkeyScript, walletConnectScript, type BrowserAsset } from "../assets.js";
import type { PageDeps } from "../page-env.js";
import type { AccountView } from "./account-page.js";
import { loadAgentAccess } from "./agents.js";
import { loadPendingApprovals } from "./approvals.js";
import { errorWords, noticeWords, subscriptionWords } from "./messages.js";
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
} from "../../../plugins/accounts/store.js";
import { canManage } from "./organizations-section.js";
import { KEY_SIGN_IN_TWO_FACTOR_ID } from "../../../plugins/key-sign-in/two-factor.js";
import { isTierId } from "../../../plugins/subscriptions/tiers.js";
import { userNfts } from "../../../plugins/wallet/ownership.js";
import { listConnections } from "../../../plugins/wallet/store.js";
import { offersAbove, type SubscriptionView } from "./subscription.js";
import type { NftsView } from "./wallets.js";
import { findRecordedTier } from "../../../plugins/core-store/users.js";

/**
 * How long the page waits for the NFT indexer (and the tier check that asks it). Past it the
 * page renders and says so; the answer still lands in their short caches for the next load.
 */
export const INDEXER_DEADLINE_MS = 2000;

/** `work`'s value, or "late" once `ms` have passed (the work goes on). */
function within<T>(work: Promise<T>, ms: number): Promise<T | "late"> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<"late">((resolve) => {
    timer = setTimeout(() => resolve("late"), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** The tier ownership says the person holds; when that cannot be told in time, the tier last recorded. */
async function loadSubscription(deps: PageDeps, userId: string): Promise<SubscriptionView> {
  const { tiers, stripe, stripeSettings } = deps.billing;
  const checked = await within(tiers.status(userId), INDEXER_DEADLINE_MS).catch((err: unknown) => {
    deps.logger?.warn("account page: tier check failed", { err, userId });
    return "late" as const;
  });
  let tier;
  if (checked === "late") {
    const recorded = await findRecordedTier(deps.db, userId);
    tier = isTierId(recorded) ? recorded : "free";
  } else tier = checked.tier;
  const lastVerified = checked !== "late" && checked.lastVerified ? new Date(checked.lastVerified) : null;
  return { tier, lastVerified, unverified: checked === "late", paymentsOn: Boolean(stripe), offers: stripe ? offersAbove(tier, stripeSettings.prices) : [] };
}

/** The NFTs of the person's wallets, as far as the indexer answers within the deadline. */
function loadNfts(deps: PageDeps, userId: string): Promise<NftsView> {
  return within(userNfts(deps.db, deps.billing.indexer, userId), INDEXER_DEADLINE_MS);
}

/** A page script, or null (logged) when it could not be built: the page renders without that control. */
function orNull(deps: PageDeps, name: string, script: Promise<BrowserAsset>): Promise<BrowserAsset | null> {
  return script.catch((err: unknown) => {
    deps.logger?.error(`${name} script build failed`, { err });
    return null;
  });
}

/** Everything the account page shows for the signed-in person, read in parallel. */
export async function loadAccountView(deps: PageDeps, session: SessionWithUser, search: URLSearchParams): Promise<AccountView> {
  const { db } = deps;
  const user = session.user;
  const [sessions, accounts, passkeys, twoFactor, identities, authorized, actingAgents, memberships, received, agents, script, walletScript, wallets, subscription, nfts, approvals] = await Promise.all([
    listActiveSessions(db, user.id),
    listLinkedAccounts(db, user.id),
    listPasskeys(db, user.id),
    findTwoFactorEnabled(db, user.id),
    listBapIdentities(db, user.id),
    listAuthorizedApps(db, user.id),
    listActingAgents(db, user.id),
    listMemberships(db, user.id),
    // Invitations by address only for a verified address (see listInvitationsFor); otherwise the e-mailed link is the way in.
    user.emailVerified ? listInvitationsFor(db, user.email) : Promise.resolve([]),
    loadAgentAccess(db, user.id),
    orNull(deps, "passkey", passkeyScript()),
    orNull(deps, "wallet-connect", walletConnectScript()),
    listConnections(db, user.id),
    loadSubscription(deps, user.id),
    loadNfts(deps, user.id),
    loadPendingApprovals(db, user.id),
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
    walletConnectControls: { scriptSrc: walletScript?.path ?? null },
    twoFactorEnabled: twoFactor,
    // plugins/key-sign-in/two-factor.ts is installed unless KEY_SIGN_IN_SKIPS_TWO_FACTOR.
    keySignInAsksSecondFactor: deps.auth.options.plugins.some((p) => p.id === KEY_SIGN_IN_TWO_FACTOR_ID),
    identities,
    apps: authorized.map((app) => ({ ...app, agents: actingAgents.get(app.clientId) ?? [] })),
    organizations: { memberships, members, invitations, received },
    agents,
    approvals,
    subscription,
    wallets,
    nfts: wallets.length ? nfts : null,
    notice: noticeWords(search.get("notice")) ?? subscriptionWords(search.get("subscription")),
    error: errorWords(deps.auth, search.get("error")),
  };
}
