-- 0005_domain_verifications (postgres): written by `npm run db:generate` from the code's schema. Review and commit it;
-- never edit a migration that has been applied anywhere: add a new one. One statement per line, ending in ";".
-- Changes: domainVerification
create table "domainVerification" ("id" text not null primary key, "userId" text not null references "user" ("id") on delete cascade, "bapId" text not null, "domain" text not null, "method" text not null, "token" text not null, "oauthClientId" text, "status" text not null, "challengeExpiresAt" timestamptz not null, "verifiedAt" timestamptz, "expiresAt" timestamptz, "lastCheckedAt" timestamptz, "failureReason" text, "createdAt" timestamptz not null);

create index "domainVerification_userId_idx" on "domainVerification" ("userId");

create index "domainVerification_bapId_idx" on "domainVerification" ("bapId");

create index "domainVerification_domain_idx" on "domainVerification" ("domain");

create index "domainVerification_oauthClientId_idx" on "domainVerification" ("oauthClientId");
