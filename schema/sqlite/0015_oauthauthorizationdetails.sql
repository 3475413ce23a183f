-- 0015_oauthauthorizationdetails (sqlite): written by `npm run db:generate` from the code's schema. Review and commit it;
-- never edit a migration that has been applied anywhere: add a new one. One statement per line, ending in ";".
-- Changes: oauthAuthorizationDetails
create table "oauthAuthorizationDetails" ("id" text not null primary key, "userId" text not null references "user" ("id") on delete cascade, "clientId" text not null, "details" text not null, "createdAt" date not null);

create index "oauthAuthorizationDetails_userId_idx" on "oauthAuthorizationDetails" ("userId");
