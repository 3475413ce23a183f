-- 0006_certificates (sqlite): written by `npm run db:generate` from the code's schema. Review and commit it;
-- never edit a migration that has been applied anywhere: add a new one. One statement per line, ending in ";".
-- Changes: issuedCertificate, bapWalletBinding
create table "issuedCertificate" ("id" text not null primary key, "serialNumber" text not null unique, "type" text not null, "subject" text not null, "certifier" text not null, "revocationOutpoint" text not null, "fields" text not null, "signature" text not null, "issuedAt" date not null, "revocationState" text, "revocationTxid" text, "revocationUpdatedAt" date);

create table "bapWalletBinding" ("id" text not null primary key, "bapId" text not null unique, "userId" text not null references "user" ("id") on delete cascade, "identityKey" text not null, "challenge" text, "challengeExpiresAt" date, "verifiedAt" date);

create index "issuedCertificate_subject_idx" on "issuedCertificate" ("subject");

create index "bapWalletBinding_userId_idx" on "bapWalletBinding" ("userId");

create index "bapWalletBinding_identityKey_idx" on "bapWalletBinding" ("identityKey");
