import type { SignInProvider } from "../../../lib/social-providers.js";
import { ErrorNote, Layout } from "../layout.js";
import { AgentAccessSection, type AgentAccessView } from "./agents.js";
import { ApprovalsSection, type PendingApproval } from "./approvals.js";
import { AppsSection, type AppView } from "./apps.js";
import { IdentitiesSection } from "./identities.js";
import { LinkedAccountsSection } from "./linked-accounts.js";
import { OrganizationsSection, type OrganizationsView } from "./organizations-section.js";
import { PasskeysSection, type PasskeyControls } from "./passkeys.js";
import { ProfileSection } from "./profile.js";
import type { BapIdentityRow, LinkedAccount, PasskeyRow, SessionRow } from "../../../plugins/accounts/store.js";
import { SessionsSection } from "./sessions.js";
import { SubscriptionSection, type SubscriptionView } from "./subscription.js";
import { TwoFactorSection } from "./two-factor.js";
import { NftsSection, WalletsSection, type NftsView, type WalletConnectControls } from "./wallets.js";
import type { WalletConnection } from "../../../plugins/wallet/store.js";

export interface AccountView {
  user: { id: string; name: string; email: string; emailVerified: boolean };
  currentSessionId: string;
  sessions: SessionRow[];
  accounts: LinkedAccount[];
  providers: readonly SignInProvider[];
  passkeys: PasskeyRow[];
  passkeyControls: PasskeyControls;
  walletConnectControls: WalletConnectControls;
  twoFactorEnabled: boolean;
  keySignInAsksSecondFactor: boolean;
  identities: BapIdentityRow[];
  apps: AppView[];
  organizations: Omit<OrganizationsView, "userId">;
  agents: AgentAccessView;
  approvals: PendingApproval[];
  subscription: SubscriptionView;
  wallets: WalletConnection[];
  /** null: no wallet is connected. */
  nfts: NftsView | null;
  notice: string | null;
  error: string | null;
}

const CONTENTS: Array<[string, string]> = [
  ["profile", "Profile"],
  ["sessions", "Sessions"],
  ["accounts", "Linked accounts"],
  ["passkeys", "Passkeys"],
  ["two-factor", "Two-factor"],
  ["identities", "BAP identities"],
  ["subscription", "Plan"],
  ["wallets", "Wallets"],
  ["nfts", "NFTs"],
  ["apps", "Apps"],
  ["organizations", "Organizations"],
  ["agents", "Agents"],
  ["approvals", "Requests"],
];

/** /account: everything a person manages about their account, one server-rendered page of plain forms. */
export function AccountPage(props: AccountView) {
  const hasPassword = props.accounts.some((a) => a.providerId === "credential" && a.hasPassword);
  return (
    <Layout title="Your account" wide>
      <h1>Your account</h1>
      <p class="muted">Signed in as {props.user.email}.</p>
      {props.notice ? (
        <p class="notice" role="status">
          {props.notice}
        </p>
      ) : null}
      <ErrorNote message={props.error} />
      <nav class="toc" aria-label="Sections">
        {CONTENTS.map(([id, label], n) => (
          <>
            {n ? " · " : ""}
            <a href={`#${id}`}>{label}</a>
          </>
        ))}
      </nav>
      <ProfileSection name={props.user.name} email={props.user.email} emailVerified={props.user.emailVerified} />
      <SessionsSection sessions={props.sessions} currentSessionId={props.currentSessionId} />
      <LinkedAccountsSection accounts={props.accounts} providers={props.providers} />
      <PasskeysSection passkeys={props.passkeys} {...props.passkeyControls} />
      <TwoFactorSection enabled={props.twoFactorEnabled} hasPassword={hasPassword} keySignInAsks={props.keySignInAsksSecondFactor} />
      <IdentitiesSection identities={props.identities} />
      <SubscriptionSection view={props.subscription} />
      <WalletsSection wallets={props.wallets} identities={props.identities} {...props.walletConnectControls} />
      <NftsSection nfts={props.nfts} />
      <AppsSection apps={props.apps} />
      <OrganizationsSection {...props.organizations} userId={props.user.id} />
      <AgentAccessSection view={props.agents} />
      <ApprovalsSection approvals={props.approvals} />
    </Layout>
  );
}
