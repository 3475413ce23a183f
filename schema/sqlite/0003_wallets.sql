-- 0002_wallets (sqlite): written by `npm run db:generate` from the code's schema. Review and commit it;
-- never edit a migration that has been applied anywhere: add a new one. One statement per line, ending in ";".
-- Changes: walletConnection
create table "walletConnection" ("id" text not null primary key, "userId" text not null references "user" ("id") on delete cascade, "bapId" text not null, "bapAddress" text not null unique, "address" text not null, "pubkey" text not null, "provider" text not null, "connectionMethod" text not null, "identityPubkey" text, "paymentAddress" text, "isPrimary" integer not null, "isPayment" integer not null, "connectedAt" date not null, "lastVerified" date not null);

create index "walletConnection_userId_idx" on "walletConnection" ("userId");

create index "walletConnection_bapId_idx" on "walletConnection" ("bapId");

create index "walletConnection_address_idx" on "walletConnection" ("address");
