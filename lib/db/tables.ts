// Written by `npm run db:types` (schema/types.ts) from the schema/ files and the code's schema: do not edit.
// tests/meta/db-types.test.ts fails when it differs from what they give.
import type { Bool, Json, Nullable, StoredKind, Timestamp } from "./columns.js";

/** Every table of the database, as Kysely<Database> reads and writes it. */
export interface Database {
  account: AccountTable;
  agent: AgentTable;
  agentCapabilityGrant: AgentCapabilityGrantTable;
  agentHost: AgentHostTable;
  approvalRequest: ApprovalRequestTable;
  auditEvent: AuditEventTable;
  backupRecoveryLink: BackupRecoveryLinkTable;
  bapBackup: BapBackupTable;
  bapIdentity: BapIdentityTable;
  bapProfileDraft: BapProfileDraftTable;
  bapPublication: BapPublicationTable;
  bapWalletBinding: BapWalletBindingTable;
  cibaRequest: CibaRequestTable;
  clientBranding: ClientBrandingTable;
  clientDailyCount: ClientDailyCountTable;
  clientDailyUser: ClientDailyUserTable;
  deviceCode: DeviceCodeTable;
  domainVerification: DomainVerificationTable;
  invitation: InvitationTable;
  issuedCertificate: IssuedCertificateTable;
  jobLease: JobLeaseTable;
  jwks: JwksTable;
  member: MemberTable;
  mintJob: MintJobTable;
  oauthAccessToken: OauthAccessTokenTable;
  oauthAuthorizationDetails: OauthAuthorizationDetailsTable;
  oauthClient: OauthClientTable;
  oauthClientAssertion: OauthClientAssertionTable;
  oauthClientRegistration: OauthClientRegistrationTable;
  oauthClientResource: OauthClientResourceTable;
  oauthConsent: OauthConsentTable;
  oauthRefreshToken: OauthRefreshTokenTable;
  oauthResource: OauthResourceTable;
  oauthTokenExchange: OauthTokenExchangeTable;
  organization: OrganizationTable;
  passkey: PasskeyTable;
  session: SessionTable;
  stripeEvent: StripeEventTable;
  subscriptionPayment: SubscriptionPaymentTable;
  twoFactor: TwoFactorTable;
  user: UserTable;
  verification: VerificationTable;
  walletConnection: WalletConnectionTable;
}

export interface AccountTable {
  id: string;
  accountId: string;
  providerId: string;
  userId: string;
  accessToken: Nullable<string>;
  refreshToken: Nullable<string>;
  idToken: Nullable<string>;
  accessTokenExpiresAt: Nullable<Timestamp>;
  refreshTokenExpiresAt: Nullable<Timestamp>;
  scope: Nullable<string>;
  password: Nullable<string>;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export interface AgentTable {
  id: string;
  name: string;
  userId: Nullable<string>;
  hostId: string;
  status: string;
  mode: string;
  publicKey: string;
  kid: Nullable<string>;
  jwksUrl: Nullable<string>;
  lastUsedAt: Nullable<Timestamp>;
  activatedAt: Nullable<Timestamp>;
  expiresAt: Nullable<Timestamp>;
  metadata: Nullable<string>;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export interface AgentCapabilityGrantTable {
  id: string;
  agentId: string;
  capability: string;
  deniedBy: Nullable<string>;
  grantedBy: Nullable<string>;
  expiresAt: Nullable<Timestamp>;
  createdAt: Timestamp;
  updatedAt: Timestamp;
  status: string;
  reason: Nullable<string>;
  constraints: Nullable<string>;
}

export interface AgentHostTable {
  id: string;
  name: Nullable<string>;
  userId: Nullable<string>;
  defaultCapabilities: Nullable<string>;
  publicKey: Nullable<string>;
  kid: Nullable<string>;
  jwksUrl: Nullable<string>;
  enrollmentTokenHash: Nullable<string>;
  enrollmentTokenExpiresAt: Nullable<Timestamp>;
  status: string;
  activatedAt: Nullable<Timestamp>;
  expiresAt: Nullable<Timestamp>;
  lastUsedAt: Nullable<Timestamp>;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export interface ApprovalRequestTable {
  id: string;
  method: string;
  agentId: Nullable<string>;
  hostId: Nullable<string>;
  userId: Nullable<string>;
  capabilities: Nullable<string>;
  status: string;
  userCodeHash: Nullable<string>;
  loginHint: Nullable<string>;
  bindingMessage: Nullable<string>;
  clientNotificationToken: Nullable<string>;
  clientNotificationEndpoint: Nullable<string>;
  deliveryMode: Nullable<string>;
  interval: number;
  lastPolledAt: Nullable<Timestamp>;
  expiresAt: Timestamp;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export interface AuditEventTable {
  id: string;
  at: Timestamp;
  event: string;
  userId: Nullable<string>;
  clientId: Nullable<string>;
  ip: Nullable<string>;
  requestId: Nullable<string>;
  detail: Nullable<string>;
}

export interface BackupRecoveryLinkTable {
  id: string;
  providerAccount: string;
  provider: string;
  accountId: string;
  bapId: string;
  userId: string;
  createdAt: Timestamp;
}

export interface BapBackupTable {
  id: string;
  bapId: string;
  userId: string;
  backup: string;
  previousBackup: Nullable<string>;
  generation: number;
  lastUpdated: Timestamp;
  createdAt: Timestamp;
}

export interface BapIdentityTable {
  id: string;
  userId: string;
  bapId: string;
  rootAddress: string;
  currentAddress: Nullable<string>;
  memberPubkey: Nullable<string>;
  identity: Nullable<string>;
  isPrimary: Bool;
  name: Nullable<string>;
  counter: Nullable<number>;
  accountPubkey: Nullable<string>;
  suspendedAt: Nullable<Timestamp>;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export interface BapProfileDraftTable {
  id: string;
  bapId: string;
  userId: string;
  profile: string;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export interface BapPublicationTable {
  id: string;
  bapId: string;
  userId: string;
  txid: string;
  profile: string;
  kind: Nullable<string>;
  fundedBy: Nullable<string>;
  createdAt: Timestamp;
}

export interface BapWalletBindingTable {
  id: string;
  bapId: string;
  userId: string;
  identityKey: string;
  challenge: Nullable<string>;
  challengeExpiresAt: Nullable<Timestamp>;
  verifiedAt: Nullable<Timestamp>;
}

export interface CibaRequestTable {
  id: string;
  authReqIdHash: string;
  clientId: string;
  userId: string;
  referenceId: Nullable<string>;
  scope: string;
  bindingMessage: Nullable<string>;
  authorizationDetails: Nullable<string>;
  acrValues: Nullable<string>;
  strong: Bool;
  status: string;
  deliveryMode: string;
  notificationToken: Nullable<string>;
  pingAuthReqId: Nullable<string>;
  dpopJkt: Nullable<string>;
  interval: number;
  lastPolledAt: Nullable<Timestamp>;
  expiresAt: Timestamp;
  decidedAt: Nullable<Timestamp>;
  createdAt: Timestamp;
}

export interface ClientBrandingTable {
  id: string;
  clientId: string;
  displayName: string;
  logoUri: Nullable<string>;
  logoType: Nullable<string>;
  logoData: Nullable<string>;
  logoHash: Nullable<string>;
  accentColor: Nullable<string>;
  supportUrl: Nullable<string>;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export interface ClientDailyCountTable {
  id: string;
  day: string;
  clientId: string;
  metric: string;
  key: string;
  count: number;
}

export interface ClientDailyUserTable {
  id: string;
  day: string;
  clientId: string;
  userId: string;
}

export interface DeviceCodeTable {
  id: string;
  deviceCode: string;
  userCode: string;
  userId: Nullable<string>;
  expiresAt: Timestamp;
  status: string;
  lastPolledAt: Nullable<Timestamp>;
  pollingInterval: Nullable<number>;
  clientId: Nullable<string>;
  scope: Nullable<string>;
  resources: Nullable<Json<string[]>>;
  oauthClientId: Nullable<string>;
}

export interface DomainVerificationTable {
  id: string;
  userId: string;
  bapId: string;
  domain: string;
  method: string;
  token: string;
  oauthClientId: Nullable<string>;
  status: string;
  challengeExpiresAt: Timestamp;
  verifiedAt: Nullable<Timestamp>;
  expiresAt: Nullable<Timestamp>;
  lastCheckedAt: Nullable<Timestamp>;
  failureReason: Nullable<string>;
  createdAt: Timestamp;
}

export interface InvitationTable {
  id: string;
  organizationId: string;
  email: string;
  role: Nullable<string>;
  status: string;
  expiresAt: Timestamp;
  createdAt: Timestamp;
  inviterId: string;
}

export interface IssuedCertificateTable {
  id: string;
  serialNumber: string;
  type: string;
  subject: string;
  certifier: string;
  revocationOutpoint: string;
  fields: string;
  signature: string;
  issuedAt: Timestamp;
  revocationState: Nullable<string>;
  revocationTxid: Nullable<string>;
  revocationUpdatedAt: Nullable<Timestamp>;
}

export interface JobLeaseTable {
  id: string;
  holder: string;
  expiresAt: Timestamp;
}

export interface JwksTable {
  id: string;
  publicKey: string;
  privateKey: string;
  createdAt: Timestamp;
  expiresAt: Nullable<Timestamp>;
  alg: Nullable<string>;
  crv: Nullable<string>;
}

export interface MemberTable {
  id: string;
  organizationId: string;
  userId: string;
  role: string;
  createdAt: Timestamp;
}

export interface MintJobTable {
  id: string;
  paymentId: string;
  userId: string;
  tier: string;
  status: string;
  attempts: number;
  nextAttemptAt: Timestamp;
  lockedUntil: Nullable<Timestamp>;
  lastError: Nullable<string>;
  walletAddress: Nullable<string>;
  nftOrigin: Nullable<string>;
  completedAt: Nullable<Timestamp>;
  createdAt: Timestamp;
  updatedAt: Timestamp;
  periodEnd: Nullable<Timestamp>;
  subscriptionStatus: Nullable<string>;
  cancelAtPeriodEnd: Nullable<Bool>;
}

export interface OauthAccessTokenTable {
  id: string;
  token: string;
  clientId: string;
  sessionId: Nullable<string>;
  userId: Nullable<string>;
  referenceId: Nullable<string>;
  authorizationCodeId: Nullable<string>;
  resources: Nullable<Json<string[]>>;
  requestedUserInfoClaims: Nullable<Json<string[]>>;
  refreshId: Nullable<string>;
  expiresAt: Timestamp;
  createdAt: Timestamp;
  revoked: Nullable<Timestamp>;
  confirmation: Nullable<Json<unknown>>;
  scopes: Json<string[]>;
}

export interface OauthAuthorizationDetailsTable {
  id: string;
  userId: string;
  clientId: string;
  details: string;
  createdAt: Timestamp;
}

export interface OauthClientTable {
  id: string;
  clientId: string;
  clientSecret: Nullable<string>;
  clientDiscoveryId: Nullable<string>;
  disabled: Nullable<Bool>;
  skipConsent: Nullable<Bool>;
  enableEndSession: Nullable<Bool>;
  subjectType: Nullable<string>;
  scopes: Nullable<Json<string[]>>;
  clientCredentialsScopes: Nullable<Json<string[]>>;
  userId: Nullable<string>;
  createdAt: Nullable<Timestamp>;
  updatedAt: Nullable<Timestamp>;
  name: Nullable<string>;
  uri: Nullable<string>;
  icon: Nullable<string>;
  contacts: Nullable<Json<string[]>>;
  tos: Nullable<string>;
  policy: Nullable<string>;
  softwareId: Nullable<string>;
  softwareVersion: Nullable<string>;
  softwareStatement: Nullable<string>;
  redirectUris: Json<string[]>;
  postLogoutRedirectUris: Nullable<Json<string[]>>;
  backchannelLogoutUri: Nullable<string>;
  backchannelLogoutSessionRequired: Nullable<Bool>;
  tokenEndpointAuthMethod: Nullable<string>;
  applicationType: Nullable<string>;
  jwks: Nullable<string>;
  jwksUri: Nullable<string>;
  grantTypes: Nullable<Json<string[]>>;
  responseTypes: Nullable<Json<string[]>>;
  requirePKCE: Nullable<Bool>;
  dpopBoundAccessTokens: Nullable<Bool>;
  referenceId: Nullable<string>;
  metadata: Nullable<Json<unknown>>;
  ownerBapId: Nullable<string>;
  memberPubkey: Nullable<string>;
  public: Nullable<Bool>;
  type: Nullable<string>;
  backchannelTokenDeliveryMode: Nullable<string>;
  backchannelClientNotificationEndpoint: Nullable<string>;
}

export interface OauthClientAssertionTable {
  id: string;
  expiresAt: Timestamp;
}

export interface OauthClientRegistrationTable {
  id: string;
  clientId: string;
  tokenHash: string;
  createdAt: Timestamp;
  lastUsedAt: Nullable<Timestamp>;
}

export interface OauthClientResourceTable {
  id: string;
  clientId: string;
  resourceId: string;
  metadata: Nullable<Json<unknown>>;
  createdAt: Nullable<Timestamp>;
}

export interface OauthConsentTable {
  id: string;
  clientId: string;
  userId: Nullable<string>;
  referenceId: Nullable<string>;
  resources: Nullable<Json<string[]>>;
  requestedUserInfoClaims: Nullable<Json<string[]>>;
  scopes: Json<string[]>;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export interface OauthRefreshTokenTable {
  id: string;
  token: string;
  clientId: string;
  sessionId: Nullable<string>;
  userId: string;
  referenceId: Nullable<string>;
  authorizationCodeId: Nullable<string>;
  resources: Nullable<Json<string[]>>;
  requestedUserInfoClaims: Nullable<Json<string[]>>;
  expiresAt: Timestamp;
  createdAt: Timestamp;
  revoked: Nullable<Timestamp>;
  rotatedAt: Nullable<Timestamp>;
  rotationReplayResponse: Nullable<string>;
  rotationReplayExpiresAt: Nullable<Timestamp>;
  authTime: Nullable<Timestamp>;
  confirmation: Nullable<Json<unknown>>;
  scopes: Json<string[]>;
}

export interface OauthResourceTable {
  id: string;
  identifier: string;
  name: string;
  accessTokenTtl: Nullable<number>;
  refreshTokenTtl: Nullable<number>;
  signingAlgorithm: Nullable<string>;
  signingKeyId: Nullable<string>;
  allowedScopes: Nullable<Json<string[]>>;
  customClaims: Nullable<Json<unknown>>;
  dpopBoundAccessTokensRequired: Nullable<Bool>;
  disabled: Nullable<Bool>;
  createdAt: Nullable<Timestamp>;
  updatedAt: Nullable<Timestamp>;
  policyVersion: Nullable<number>;
  metadata: Nullable<Json<unknown>>;
}

export interface OauthTokenExchangeTable {
  id: string;
  userId: string;
  agentClientId: string;
  grantClientId: string;
  expiresAt: Timestamp;
  createdAt: Timestamp;
}

export interface OrganizationTable {
  id: string;
  name: string;
  slug: string;
  logo: Nullable<string>;
  createdAt: Timestamp;
  metadata: Nullable<string>;
}

export interface PasskeyTable {
  id: string;
  name: Nullable<string>;
  publicKey: string;
  userId: string;
  credentialID: string;
  counter: number;
  deviceType: string;
  backedUp: Bool;
  transports: Nullable<string>;
  createdAt: Nullable<Timestamp>;
  aaguid: Nullable<string>;
}

export interface SessionTable {
  id: string;
  expiresAt: Timestamp;
  token: string;
  createdAt: Timestamp;
  updatedAt: Timestamp;
  ipAddress: Nullable<string>;
  userAgent: Nullable<string>;
  userId: string;
  selectedBapId: Nullable<string>;
  impersonatedBy: Nullable<string>;
  activeOrganizationId: Nullable<string>;
  subscriptionTier: Nullable<string>;
}

export interface StripeEventTable {
  id: string;
  eventId: string;
  type: string;
  createdAt: Timestamp;
}

export interface SubscriptionPaymentTable {
  id: string;
  checkoutSessionId: string;
  userId: string;
  tier: string;
  interval: Nullable<string>;
  paymentIntentId: Nullable<string>;
  amountTotal: Nullable<number>;
  currency: Nullable<string>;
  paymentStatus: string;
  flag: Nullable<string>;
  flagDetail: Nullable<string>;
  flaggedAt: Nullable<Timestamp>;
  createdAt: Timestamp;
  updatedAt: Timestamp;
  subscriptionId: Nullable<string>;
  customerId: Nullable<string>;
}

export interface TwoFactorTable {
  id: string;
  secret: string;
  backupCodes: string;
  userId: string;
  verified: Nullable<Bool>;
  failedVerificationCount: Nullable<number>;
  lockedUntil: Nullable<Timestamp>;
}

export interface UserTable {
  id: string;
  name: string;
  email: string;
  emailVerified: Bool;
  image: Nullable<string>;
  createdAt: Timestamp;
  updatedAt: Timestamp;
  pubkey: Nullable<string>;
  subscriptionTier: Nullable<string>;
  onboarding_completed: Nullable<Bool>;
  twoFactorEnabled: Nullable<Bool>;
  role: Nullable<string>;
  banned: Nullable<Bool>;
  banReason: Nullable<string>;
  banExpires: Nullable<Timestamp>;
}

export interface VerificationTable {
  id: string;
  identifier: string;
  value: string;
  expiresAt: Timestamp;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export interface WalletConnectionTable {
  id: string;
  userId: string;
  bapId: string;
  bapAddress: string;
  address: string;
  pubkey: string;
  provider: string;
  connectionMethod: string;
  identityPubkey: Nullable<string>;
  paymentAddress: Nullable<string>;
  isPrimary: Bool;
  isPayment: Bool;
  connectedAt: Timestamp;
  lastVerified: Timestamp;
}

/** The columns SQLite stores in another form than they are read (see columns.ts), per table. */
export const STORED_KINDS: { readonly [T in keyof Database]: { readonly [C in keyof Database[T]]?: StoredKind } } = {
  account: { accessTokenExpiresAt: "date", refreshTokenExpiresAt: "date", createdAt: "date", updatedAt: "date" },
  agent: { lastUsedAt: "date", activatedAt: "date", expiresAt: "date", createdAt: "date", updatedAt: "date" },
  agentCapabilityGrant: { expiresAt: "date", createdAt: "date", updatedAt: "date" },
  agentHost: { enrollmentTokenExpiresAt: "date", activatedAt: "date", expiresAt: "date", lastUsedAt: "date", createdAt: "date", updatedAt: "date" },
  approvalRequest: { lastPolledAt: "date", expiresAt: "date", createdAt: "date", updatedAt: "date" },
  auditEvent: { at: "date" },
  backupRecoveryLink: { createdAt: "date" },
  bapBackup: { lastUpdated: "date", createdAt: "date" },
  bapIdentity: { isPrimary: "bool", suspendedAt: "date", createdAt: "date", updatedAt: "date" },
  bapProfileDraft: { createdAt: "date", updatedAt: "date" },
  bapPublication: { createdAt: "date" },
  bapWalletBinding: { challengeExpiresAt: "date", verifiedAt: "date" },
  cibaRequest: { strong: "bool", lastPolledAt: "date", expiresAt: "date", decidedAt: "date", createdAt: "date" },
  clientBranding: { createdAt: "date", updatedAt: "date" },
  clientDailyCount: {  },
  clientDailyUser: {  },
  deviceCode: { expiresAt: "date", lastPolledAt: "date", resources: "json" },
  domainVerification: { challengeExpiresAt: "date", verifiedAt: "date", expiresAt: "date", lastCheckedAt: "date", createdAt: "date" },
  invitation: { expiresAt: "date", createdAt: "date" },
  issuedCertificate: { issuedAt: "date", revocationUpdatedAt: "date" },
  jobLease: { expiresAt: "date" },
  jwks: { createdAt: "date", expiresAt: "date" },
  member: { createdAt: "date" },
  mintJob: { nextAttemptAt: "date", lockedUntil: "date", completedAt: "date", createdAt: "date", updatedAt: "date", periodEnd: "date", cancelAtPeriodEnd: "bool" },
  oauthAccessToken: { resources: "json", requestedUserInfoClaims: "json", expiresAt: "date", createdAt: "date", revoked: "date", scopes: "json" },
  oauthAuthorizationDetails: { createdAt: "date" },
  oauthClient: { disabled: "bool", skipConsent: "bool", enableEndSession: "bool", scopes: "json", clientCredentialsScopes: "json", createdAt: "date", updatedAt: "date", contacts: "json", redirectUris: "json", postLogoutRedirectUris: "json", backchannelLogoutSessionRequired: "bool", grantTypes: "json", responseTypes: "json", requirePKCE: "bool", dpopBoundAccessTokens: "bool", public: "bool" },
  oauthClientAssertion: { expiresAt: "date" },
  oauthClientRegistration: { createdAt: "date", lastUsedAt: "date" },
  oauthClientResource: { createdAt: "date" },
  oauthConsent: { resources: "json", requestedUserInfoClaims: "json", scopes: "json", createdAt: "date", updatedAt: "date" },
  oauthRefreshToken: { resources: "json", requestedUserInfoClaims: "json", expiresAt: "date", createdAt: "date", revoked: "date", rotatedAt: "date", rotationReplayExpiresAt: "date", authTime: "date", scopes: "json" },
  oauthResource: { allowedScopes: "json", dpopBoundAccessTokensRequired: "bool", disabled: "bool", createdAt: "date", updatedAt: "date" },
  oauthTokenExchange: { expiresAt: "date", createdAt: "date" },
  organization: { createdAt: "date" },
  passkey: { backedUp: "bool", createdAt: "date" },
  session: { expiresAt: "date", createdAt: "date", updatedAt: "date" },
  stripeEvent: { createdAt: "date" },
  subscriptionPayment: { flaggedAt: "date", createdAt: "date", updatedAt: "date" },
  twoFactor: { verified: "bool", lockedUntil: "date" },
  user: { emailVerified: "bool", createdAt: "date", updatedAt: "date", onboarding_completed: "bool", twoFactorEnabled: "bool", banned: "bool", banExpires: "date" },
  verification: { expiresAt: "date", createdAt: "date", updatedAt: "date" },
  walletConnection: { isPrimary: "bool", isPayment: "bool", connectedAt: "date", lastVerified: "date" },
};
