-- 0016_ciba (postgres): written by `npm run db:generate` from the code's schema. Review and commit it;
-- never edit a migration that has been applied anywhere: add a new one. One statement per line, ending in ";".
-- Changes: cibaRequest, oauthClient.backchannelTokenDeliveryMode, oauthClient.backchannelClientNotificationEndpoint
alter table "oauthClient" add column "backchannelTokenDeliveryMode" text;

alter table "oauthClient" add column "backchannelClientNotificationEndpoint" text;

create table "cibaRequest" ("id" text not null primary key, "authReqIdHash" text not null unique, "clientId" text not null, "userId" text not null references "user" ("id") on delete cascade, "referenceId" text, "scope" text not null, "bindingMessage" text, "authorizationDetails" text, "acrValues" text, "strong" boolean not null, "status" text not null, "deliveryMode" text not null, "notificationToken" text, "pingAuthReqId" text, "dpopJkt" text, "interval" integer not null, "lastPolledAt" timestamptz, "expiresAt" timestamptz not null, "decidedAt" timestamptz, "createdAt" timestamptz not null);

create index "cibaRequest_userId_idx" on "cibaRequest" ("userId");
