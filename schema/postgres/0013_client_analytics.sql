-- 0013_client_analytics (postgres): written by `npm run db:generate` from the code's schema. Review and commit it;
-- never edit a migration that has been applied anywhere: add a new one. One statement per line, ending in ";".
-- Changes: clientDailyCount, clientDailyUser
create table "clientDailyCount" ("id" text not null primary key, "day" text not null, "clientId" text not null, "metric" text not null, "key" text not null, "count" integer not null);

create table "clientDailyUser" ("id" text not null primary key, "day" text not null, "clientId" text not null, "userId" text not null);

create index "clientDailyCount_clientId_idx" on "clientDailyCount" ("clientId");

create index "clientDailyUser_clientId_idx" on "clientDailyUser" ("clientId");
