-- 0010_oauthtokenexchange (postgres): written by `npm run db:generate` from the code's schema. Review and commit it;
-- never edit a migration that has been applied anywhere: add a new one. One statement per line, ending in ";".
-- Changes: oauthTokenExchange
create table "oauthTokenExchange" ("id" text not null primary key, "userId" text not null references "user" ("id") on delete cascade, "agentClientId" text not null, "grantClientId" text not null, "expiresAt" timestamptz not null, "createdAt" timestamptz not null);

create index "oauthTokenExchange_userId_idx" on "oauthTokenExchange" ("userId");
