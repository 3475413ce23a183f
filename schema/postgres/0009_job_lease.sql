-- 0009_job_lease (postgres): written by `npm run db:generate` from the code's schema. Review and commit it;
-- never edit a migration that has been applied anywhere: add a new one. One statement per line, ending in ";".
-- Changes: jobLease
create table "jobLease" ("id" text not null primary key, "holder" text not null, "expiresAt" timestamptz not null);
