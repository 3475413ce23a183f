-- 0011_subscription_periods (postgres): written by `npm run db:generate` from the code's schema. Review and commit it;
-- never edit a migration that has been applied anywhere: add a new one. One statement per line, ending in ";".
-- Changes: subscriptionPayment.subscriptionId, subscriptionPayment.customerId, mintJob.periodEnd, mintJob.subscriptionStatus, mintJob.cancelAtPeriodEnd
alter table "subscriptionPayment" add column "subscriptionId" text;

alter table "subscriptionPayment" add column "customerId" text;

alter table "mintJob" add column "periodEnd" timestamptz;

alter table "mintJob" add column "subscriptionStatus" text;

alter table "mintJob" add column "cancelAtPeriodEnd" boolean;

create index "subscriptionPayment_subscriptionId_idx" on "subscriptionPayment" ("subscriptionId");

-- A tier NFT minted before periods existed was one payment for one month or year: it counts until then.
update "mintJob" set "periodEnd" = p."createdAt" + case when p."interval" = 'annual' then interval '1 year' else interval '1 month' end from "subscriptionPayment" p where p."id" = "mintJob"."paymentId" and "mintJob"."periodEnd" is null;
