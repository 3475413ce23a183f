-- 0001_initial (sqlite): written by `npm run db:generate` from the code's schema. Review and commit it;
-- never edit a migration that has been applied anywhere: add a new one. One statement per line, ending in ";".
-- Changes: user, session, account, verification, bapIdentity, bapProfileDraft, bapPublication, jwks, twoFactor, oauthClient, oauthResource, oauthClientResource, oauthRefreshToken, oauthAccessToken, oauthConsent, oauthClientAssertion, deviceCode, bapBackup, backupRecoveryLink, organization, member, invitation, passkey, agentHost, agent, agentCapabilityGrant, approvalRequest, index oauthClientResource_clientId_resourceId_uidx, index deviceCode_deviceCode_uidx, index deviceCode_userCode_uidx
create table "user" ("id" text not null primary key, "name" text not null, "email" text not null unique, "emailVerified" integer not null, "image" text, "createdAt" date not null, "updatedAt" date not null, "pubkey" text, "subscriptionTier" text, "onboarding_completed" integer, "twoFactorEnabled" integer, "role" text, "banned" integer, "banReason" text, "banExpires" date);

create table "session" ("id" text not null primary key, "expiresAt" date not null, "token" text not null unique, "createdAt" date not null, "updatedAt" date not null, "ipAddress" text, "userAgent" text, "userId" text not null references "user" ("id") on delete cascade, "selectedBapId" text, "impersonatedBy" text, "activeOrganizationId" text);

create table "account" ("id" text not null primary key, "accountId" text not null, "providerId" text not null, "userId" text not null references "user" ("id") on delete cascade, "accessToken" text, "refreshToken" text, "idToken" text, "accessTokenExpiresAt" date, "refreshTokenExpiresAt" date, "scope" text, "password" text, "createdAt" date not null, "updatedAt" date not null);

create table "verification" ("id" text not null primary key, "identifier" text not null, "value" text not null, "expiresAt" date not null, "createdAt" date not null, "updatedAt" date not null);

create table "bapIdentity" ("id" text not null primary key, "userId" text not null references "user" ("id") on delete cascade, "bapId" text not null unique, "rootAddress" text not null, "currentAddress" text, "memberPubkey" text, "identity" text, "isPrimary" integer not null, "name" text, "counter" integer, "accountPubkey" text, "suspendedAt" date, "createdAt" date not null, "updatedAt" date not null);

create table "bapProfileDraft" ("id" text not null primary key, "bapId" text not null unique, "userId" text not null references "user" ("id") on delete cascade, "profile" text not null, "createdAt" date not null, "updatedAt" date not null);

create table "bapPublication" ("id" text not null primary key, "bapId" text not null, "userId" text not null references "user" ("id") on delete cascade, "txid" text not null unique, "profile" text not null, "kind" text, "fundedBy" text, "createdAt" date not null);

create table "jwks" ("id" text not null primary key, "publicKey" text not null, "privateKey" text not null, "createdAt" date not null, "expiresAt" date, "alg" text, "crv" text);

create table "twoFactor" ("id" text not null primary key, "secret" text not null, "backupCodes" text not null, "userId" text not null references "user" ("id") on delete cascade, "verified" integer, "failedVerificationCount" integer, "lockedUntil" date);

create table "oauthClient" ("id" text not null primary key, "clientId" text not null unique, "clientSecret" text, "clientDiscoveryId" text, "disabled" integer, "skipConsent" integer, "enableEndSession" integer, "subjectType" text, "scopes" text, "clientCredentialsScopes" text, "userId" text references "user" ("id") on delete cascade, "createdAt" date, "updatedAt" date, "name" text, "uri" text, "icon" text, "contacts" text, "tos" text, "policy" text, "softwareId" text, "softwareVersion" text, "softwareStatement" text, "redirectUris" text not null, "postLogoutRedirectUris" text, "backchannelLogoutUri" text, "backchannelLogoutSessionRequired" integer, "tokenEndpointAuthMethod" text, "applicationType" text, "jwks" text, "jwksUri" text, "grantTypes" text, "responseTypes" text, "requirePKCE" integer, "dpopBoundAccessTokens" integer, "referenceId" text, "metadata" text, "ownerBapId" text, "memberPubkey" text, "public" integer, "type" text);

create table "oauthResource" ("id" text not null primary key, "identifier" text not null unique, "name" text not null, "accessTokenTtl" integer, "refreshTokenTtl" integer, "signingAlgorithm" text, "signingKeyId" text, "allowedScopes" text, "customClaims" text, "dpopBoundAccessTokensRequired" integer, "disabled" integer, "createdAt" date, "updatedAt" date, "policyVersion" integer, "metadata" text);

create table "oauthClientResource" ("id" text not null primary key, "clientId" text not null references "oauthClient" ("clientId") on delete cascade, "resourceId" text not null references "oauthResource" ("identifier") on delete cascade, "metadata" text, "createdAt" date);

create table "oauthRefreshToken" ("id" text not null primary key, "token" text not null unique, "clientId" text not null references "oauthClient" ("clientId") on delete cascade, "sessionId" text references "session" ("id") on delete set null, "userId" text not null references "user" ("id") on delete cascade, "referenceId" text, "authorizationCodeId" text, "resources" text, "requestedUserInfoClaims" text, "expiresAt" date not null, "createdAt" date not null, "revoked" date, "rotatedAt" date, "rotationReplayResponse" text, "rotationReplayExpiresAt" date, "authTime" date, "confirmation" text, "scopes" text not null);

create table "oauthAccessToken" ("id" text not null primary key, "token" text not null unique, "clientId" text not null references "oauthClient" ("clientId") on delete cascade, "sessionId" text references "session" ("id") on delete set null, "userId" text references "user" ("id") on delete cascade, "referenceId" text, "authorizationCodeId" text, "resources" text, "requestedUserInfoClaims" text, "refreshId" text references "oauthRefreshToken" ("id") on delete cascade, "expiresAt" date not null, "createdAt" date not null, "revoked" date, "confirmation" text, "scopes" text not null);

create table "oauthConsent" ("id" text not null primary key, "clientId" text not null references "oauthClient" ("clientId") on delete cascade, "userId" text references "user" ("id") on delete cascade, "referenceId" text, "resources" text, "requestedUserInfoClaims" text, "scopes" text not null, "createdAt" date not null, "updatedAt" date not null);

create table "oauthClientAssertion" ("id" text not null primary key, "expiresAt" date not null);

create table "deviceCode" ("id" text not null primary key, "deviceCode" text not null, "userCode" text not null, "userId" text, "expiresAt" date not null, "status" text not null, "lastPolledAt" date, "pollingInterval" integer, "clientId" text, "scope" text, "resources" text, "oauthClientId" text);

create table "bapBackup" ("id" text not null primary key, "bapId" text not null unique, "userId" text not null references "user" ("id") on delete cascade, "backup" text not null, "previousBackup" text, "generation" integer not null, "lastUpdated" date not null, "createdAt" date not null);

create table "backupRecoveryLink" ("id" text not null primary key, "providerAccount" text not null unique, "provider" text not null, "accountId" text not null, "bapId" text not null, "userId" text not null references "user" ("id") on delete cascade, "createdAt" date not null);

create table "organization" ("id" text not null primary key, "name" text not null, "slug" text not null unique, "logo" text, "createdAt" date not null, "metadata" text);

create table "member" ("id" text not null primary key, "organizationId" text not null references "organization" ("id") on delete cascade, "userId" text not null references "user" ("id") on delete cascade, "role" text not null, "createdAt" date not null);

create table "invitation" ("id" text not null primary key, "organizationId" text not null references "organization" ("id") on delete cascade, "email" text not null, "role" text, "status" text not null, "expiresAt" date not null, "createdAt" date not null, "inviterId" text not null references "user" ("id") on delete cascade);

create table "passkey" ("id" text not null primary key, "name" text, "publicKey" text not null, "userId" text not null references "user" ("id") on delete cascade, "credentialID" text not null, "counter" integer not null, "deviceType" text not null, "backedUp" integer not null, "transports" text, "createdAt" date, "aaguid" text);

create table "agentHost" ("id" text not null primary key, "name" text, "userId" text references "user" ("id") on delete cascade, "defaultCapabilities" text, "publicKey" text, "kid" text, "jwksUrl" text, "enrollmentTokenHash" text, "enrollmentTokenExpiresAt" date, "status" text not null, "activatedAt" date, "expiresAt" date, "lastUsedAt" date, "createdAt" date not null, "updatedAt" date not null);

create table "agent" ("id" text not null primary key, "name" text not null, "userId" text references "user" ("id") on delete cascade, "hostId" text not null references "agentHost" ("id") on delete cascade, "status" text not null, "mode" text not null, "publicKey" text not null, "kid" text, "jwksUrl" text, "lastUsedAt" date, "activatedAt" date, "expiresAt" date, "metadata" text, "createdAt" date not null, "updatedAt" date not null);

create table "agentCapabilityGrant" ("id" text not null primary key, "agentId" text not null references "agent" ("id") on delete cascade, "capability" text not null, "deniedBy" text references "user" ("id") on delete cascade, "grantedBy" text references "user" ("id") on delete cascade, "expiresAt" date, "createdAt" date not null, "updatedAt" date not null, "status" text not null, "reason" text, "constraints" text);

create table "approvalRequest" ("id" text not null primary key, "method" text not null, "agentId" text references "agent" ("id") on delete cascade, "hostId" text references "agentHost" ("id") on delete cascade, "userId" text references "user" ("id") on delete cascade, "capabilities" text, "status" text not null, "userCodeHash" text, "loginHint" text, "bindingMessage" text, "clientNotificationToken" text, "clientNotificationEndpoint" text, "deliveryMode" text, "interval" integer not null, "lastPolledAt" date, "expiresAt" date not null, "createdAt" date not null, "updatedAt" date not null);

create index "session_userId_idx" on "session" ("userId");

create index "account_userId_idx" on "account" ("userId");

create index "verification_identifier_idx" on "verification" ("identifier");

create index "bapIdentity_userId_idx" on "bapIdentity" ("userId");

create index "bapIdentity_memberPubkey_idx" on "bapIdentity" ("memberPubkey");

create index "bapProfileDraft_userId_idx" on "bapProfileDraft" ("userId");

create index "bapPublication_bapId_idx" on "bapPublication" ("bapId");

create index "twoFactor_secret_idx" on "twoFactor" ("secret");

create index "twoFactor_userId_idx" on "twoFactor" ("userId");

create index "oauthClient_userId_idx" on "oauthClient" ("userId");

create index "oauthClientResource_clientId_idx" on "oauthClientResource" ("clientId");

create index "oauthClientResource_resourceId_idx" on "oauthClientResource" ("resourceId");

create index "oauthRefreshToken_clientId_idx" on "oauthRefreshToken" ("clientId");

create index "oauthRefreshToken_sessionId_idx" on "oauthRefreshToken" ("sessionId");

create index "oauthRefreshToken_userId_idx" on "oauthRefreshToken" ("userId");

create index "oauthRefreshToken_authorizationCodeId_idx" on "oauthRefreshToken" ("authorizationCodeId");

create index "oauthAccessToken_clientId_idx" on "oauthAccessToken" ("clientId");

create index "oauthAccessToken_sessionId_idx" on "oauthAccessToken" ("sessionId");

create index "oauthAccessToken_userId_idx" on "oauthAccessToken" ("userId");

create index "oauthAccessToken_authorizationCodeId_idx" on "oauthAccessToken" ("authorizationCodeId");

create index "oauthAccessToken_refreshId_idx" on "oauthAccessToken" ("refreshId");

create index "oauthConsent_clientId_idx" on "oauthConsent" ("clientId");

create index "oauthConsent_userId_idx" on "oauthConsent" ("userId");

create index "bapBackup_userId_idx" on "bapBackup" ("userId");

create index "backupRecoveryLink_bapId_idx" on "backupRecoveryLink" ("bapId");

create index "backupRecoveryLink_userId_idx" on "backupRecoveryLink" ("userId");

create index "member_organizationId_idx" on "member" ("organizationId");

create index "member_userId_idx" on "member" ("userId");

create index "invitation_organizationId_idx" on "invitation" ("organizationId");

create index "invitation_email_idx" on "invitation" ("email");

create index "passkey_userId_idx" on "passkey" ("userId");

create index "passkey_credentialID_idx" on "passkey" ("credentialID");

create index "agentHost_userId_idx" on "agentHost" ("userId");

create index "agentHost_kid_idx" on "agentHost" ("kid");

create index "agentHost_enrollmentTokenHash_idx" on "agentHost" ("enrollmentTokenHash");

create index "agentHost_status_idx" on "agentHost" ("status");

create index "agent_userId_idx" on "agent" ("userId");

create index "agent_hostId_idx" on "agent" ("hostId");

create index "agent_status_idx" on "agent" ("status");

create index "agent_kid_idx" on "agent" ("kid");

create index "agentCapabilityGrant_agentId_idx" on "agentCapabilityGrant" ("agentId");

create index "agentCapabilityGrant_capability_idx" on "agentCapabilityGrant" ("capability");

create index "agentCapabilityGrant_grantedBy_idx" on "agentCapabilityGrant" ("grantedBy");

create index "agentCapabilityGrant_status_idx" on "agentCapabilityGrant" ("status");

create index "approvalRequest_agentId_idx" on "approvalRequest" ("agentId");

create index "approvalRequest_hostId_idx" on "approvalRequest" ("hostId");

create index "approvalRequest_userId_idx" on "approvalRequest" ("userId");

create index "approvalRequest_status_idx" on "approvalRequest" ("status");

create unique index "oauthClientResource_clientId_resourceId_uidx" on "oauthClientResource" ("clientId", "resourceId");

create unique index "deviceCode_deviceCode_uidx" on "deviceCode" ("deviceCode");

create unique index "deviceCode_userCode_uidx" on "deviceCode" ("userCode");
