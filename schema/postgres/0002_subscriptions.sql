-- 0002_subscriptions (postgres): written by `npm run db:generate` from the code's schema. Review and commit it;
-- never edit a migration that has been applied anywhere: add a new one. One statement per line, ending in ";".
-- Changes: stripeEvent, subscriptionPayment, mintJob, session.subscriptionTier
alter table "session" add column "subscriptionTier" text default 'free';

create table "stripeEvent" ("id" text not null primary key, "eventId" text not null unique, "type" text not null, "createdAt" timestamptz not null);

create table "subscriptionPayment" ("id" text not null primary key, "checkoutSessionId" text not null unique, "userId" text not null, "tier" text not null, "interval" text, "paymentIntentId" text, "amountTotal" integer, "currency" text, "paymentStatus" text not null, "flag" text, "flagDetail" text, "flaggedAt" timestamptz, "createdAt" timestamptz not null, "updatedAt" timestamptz not null);

create table "mintJob" ("id" text not null primary key, "paymentId" text not null unique, "userId" text not null, "tier" text not null, "status" text not null, "attempts" integer not null, "nextAttemptAt" timestamptz not null, "lockedUntil" timestamptz, "lastError" text, "walletAddress" text, "nftOrigin" text, "completedAt" timestamptz, "createdAt" timestamptz not null, "updatedAt" timestamptz not null);

create index "subscriptionPayment_userId_idx" on "subscriptionPayment" ("userId");

create index "subscriptionPayment_paymentIntentId_idx" on "subscriptionPayment" ("paymentIntentId");

create index "mintJob_userId_idx" on "mintJob" ("userId");

create index "mintJob_status_idx" on "mintJob" ("status");
