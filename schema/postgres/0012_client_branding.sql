-- 0012_client_branding (postgres): written by `npm run db:generate` from the code's schema. Review and commit it;
-- never edit a migration that has been applied anywhere: add a new one. One statement per line, ending in ";".
-- Changes: clientBranding
create table "clientBranding" ("id" text not null primary key, "clientId" text not null unique references "oauthClient" ("clientId") on delete cascade, "displayName" text not null, "logoUri" text, "logoType" text, "logoData" text, "logoHash" text, "accentColor" text, "supportUrl" text, "createdAt" timestamptz not null, "updatedAt" timestamptz not null);
