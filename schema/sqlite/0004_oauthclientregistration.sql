-- 0004_oauthclientregistration (sqlite): written by `npm run db:generate` from the code's schema. Review and commit it;
-- never edit a migration that has been applied anywhere: add a new one. One statement per line, ending in ";".
-- Changes: oauthClientRegistration
create table "oauthClientRegistration" ("id" text not null primary key, "clientId" text not null unique references "oauthClient" ("clientId") on delete cascade, "tokenHash" text not null, "createdAt" date not null, "lastUsedAt" date);
