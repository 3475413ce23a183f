-- 0007_audit_log (postgres): written by `npm run db:generate` from the code's schema. Review and commit it;
-- never edit a migration that has been applied anywhere: add a new one. One statement per line, ending in ";".
-- Changes: auditEvent
create table "auditEvent" ("id" text not null primary key, "at" timestamptz not null, "event" text not null, "userId" text, "clientId" text, "ip" text, "requestId" text, "detail" text);

create index "auditEvent_at_idx" on "auditEvent" ("at");

create index "auditEvent_event_idx" on "auditEvent" ("event");

create index "auditEvent_userId_idx" on "auditEvent" ("userId");
