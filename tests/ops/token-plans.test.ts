import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CompiledQuery } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type DatabaseHandle } from "../../lib/db/connection.js";
import { applyMigrations } from "../../lib/migrate.js";
import { clientAndTokenSql } from "../../plugins/oauth-store/introspection.js";
import { refreshGrantSql } from "../../plugins/oauth-store/refresh.js";
import { batchedReadSql, batchedRowsSql } from "../../lib/db/gather.js";
import { identitiesInForceSql } from "../../plugins/bap-identity/store.js";
import { ROTATE_ONE, rotateManySql, ROTATE_TYPES } from "../../plugins/oauth-store/refresh-postgres.js";
import { userInfoTokenSql } from "../../plugins/oauth-store/userinfo.js";
import { sessionWithUserSql } from "../../plugins/core-store/sessions.js";

/**
 * The fast lanes' token reads (the refresh grant's, introspection's) must find the token through
 * its hash's unique index on either database, whatever the statistics say. On PostgreSQL the
 * statement is prepared once per connection and its generic plan kept: planned on a table
 * without statistics while the token was joined on its client as well, it read every token of
 * the client instead (plugins/oauth-store/introspection.ts, above oauthTokenStore). PostgreSQL
 * is asked for the generic plan on empty copies of the tables, which have no statistics.
 */

const url = process.env.TEST_DATABASE_URL;
const dir = mkdtempSync(join(tmpdir(), "idp-plans-"));
let database: DatabaseHandle;

const STATEMENTS = [
  { name: "refresh grant", table: "oauthRefreshToken", sql: (db: DatabaseHandle["db"]) => refreshGrantSql(db, database.type) },
  { name: "introspection", table: "oauthAccessToken", sql: clientAndTokenSql },
] as const;

beforeAll(async () => {
  database = url ? createDb({ kind: "postgres", url }) : createDb({ kind: "sqlite", file: join(dir, "plans.sqlite") });
  if (!url) await applyMigrations(database);
});

afterAll(async () => {
  await database.close();
  rmSync(dir, { recursive: true, force: true });
});

describe.runIf(!url)("token reads on SQLite", () => {
  for (const { name, table, sql } of STATEMENTS) {
    it(`the ${name} finds the token by its hash's unique index`, async () => {
      const plan = database.readRowsNow!(`explain query plan ${sql(database.db)}`, ["hash", "client"]).map((row) => String(row.detail));
      // t: the token; its search is by the token column's unique index, not the client's.
      const tokenStep = plan.find((step) => /^SEARCH t\b/.test(step));
      expect(tokenStep, plan.join("\n")).toMatch(/USING INDEX \S+ \(token=\?\)/);
      expect(plan.join("\n")).not.toMatch(new RegExp(`${table}_clientId`));
    });
  }
});

describe.runIf(url)("the lanes' statements on PostgreSQL", () => {
  it("run on connections that plan them once, generically; the app's statements keep PostgreSQL's choice", async () => {
    const setting = "select current_setting('plan_cache_mode') as mode";
    const lanes = await Promise.all([1, 2, 3].map(() => database.queryPrepared!("idp_test_plan_mode", setting, [])));
    for (const { rows } of lanes) expect(rows[0]!.mode).toBe("force_generic_plan");
    const app = await database.db.executeQuery<{ mode: string }>(CompiledQuery.raw(setting, []));
    expect(app.rows[0]!.mode).toBe("auto");
  });
});

describe.runIf(url)("token reads on PostgreSQL, generic plans on tables without statistics", () => {
  const schema = `plans_${randomUUID().slice(0, 8)}`;
  let client: pg.Client;

  beforeAll(async () => {
    client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`create schema "${schema}"`);
    for (const table of ["user", "session", "oauthClient", "oauthRefreshToken", "oauthAccessToken", "bapIdentity"]) {
      await client.query(`create table "${schema}"."${table}" (like public."${table}" including all)`);
    }
    await client.query(`set search_path to "${schema}"`);
    // One client holding one token of each kind: as on a new deployment's first refreshes.
    await client.query(`insert into "user" (id, name, email, "emailVerified", "createdAt", "updatedAt") values ('u1', 'n', 'u1@example.com', true, now(), now())`);
    await client.query(`insert into "oauthClient" (id, "clientId", "redirectUris", "createdAt", "updatedAt") values ('c1', 'client1', '[]', now(), now())`);
    await client.query(`insert into "oauthRefreshToken" (id, token, "clientId", "userId", "expiresAt", "createdAt", scopes) values ('r1', 'h1', 'client1', 'u1', now(), now(), '[]')`);
    await client.query(`insert into "oauthAccessToken" (id, token, "clientId", "userId", "expiresAt", "createdAt", scopes) values ('a1', 'h1', 'client1', 'u1', now(), now(), '[]')`);
    await client.query("set plan_cache_mode = force_generic_plan");
  });

  afterAll(async () => {
    await client.query(`drop schema "${schema}" cascade`);
    await client.end();
  });

  const explained = async (sql: string, parameters: string) => {
    await client.query(`prepare plan_q as ${sql}`);
    try {
      return (await client.query(`explain execute plan_q(${parameters})`)).rows.map((row) => String(row["QUERY PLAN"])).join("\n");
    } finally {
      await client.query("deallocate plan_q");
    }
  };

  it("the refresh grant's gathered rotation finds the presented tokens by their primary key", async () => {
    const value = (type: string) => (type === "timestamptz" ? "now()" : type === "jsonb" ? `'[]'::jsonb` : "'r1'");
    const plan = await explained(rotateManySql(3), ROTATE_TYPES.map((type) => `array[${value(type)}, ${value(type)}, ${value(type)}]`).join(", "));
    // Each of the three presented rows is updated through the primary key, none by a scan.
    expect(plan.match(/Index Scan using "?oauthRefreshToken_pkey"? on "?oauthRefreshToken"?/g), plan).toHaveLength(3);
    expect(plan, plan).not.toMatch(/Seq Scan on "?oauthRefreshToken"?/);
  });

  for (const { name, table, sql } of STATEMENTS) {
    it(`the ${name} reads the token by its hash's unique index`, async () => {
      const plan = await explained(sql(database.db), "'h1', 'client1'");
      // The scan of the token table, and its condition: the hash, not the client.
      expect(plan).toMatch(new RegExp(`Index Scan using "?${table}_token_key"? on "?${table}"? t\\b`));
      expect(plan).toMatch(/Index Cond: \(token = \$1\)/);
      expect(plan).not.toMatch(new RegExp(`${table}_clientId_idx`));
    });

    it(`the ${name} gathered for several requests (lib/db/gather.ts) reads each token by its hash's unique index`, async () => {
      const plan = await explained(batchedReadSql(sql(database.db), ["text", "text"]), "array['h1', 'h2'], array['client1', 'client1']");
      expect(plan, plan).toMatch(new RegExp(`Index Scan using "?${table}_token_key"? on "?${table}"? t\\b`));
      expect(plan).toMatch(/Index Cond: \(token = "?__batch"?\."?__p1"?\)/);
      expect(plan).not.toMatch(new RegExp(`${table}_clientId_idx`));
    });
  }

  // The lanes' single-row statements run with generic plans as well (force_generic_plan): each
  // finds its row by a unique key and its joined rows by their primary keys, never by a scan.
  it("the single rotation revokes the presented token by its primary key", async () => {
    const plan = await explained(ROTATE_ONE, "now(), 'r1', 'r2', 'h2', 'client1', null, 'u1', null, null, '[]', '[]', now(), now(), 'a2', 'h2', now()");
    expect(plan, plan).toMatch(/Index Scan using "?oauthRefreshToken_pkey"? on "?oauthRefreshToken"?/);
    expect(plan, plan).not.toMatch(/Seq Scan/);
  });

  it("userinfo reads the token by its hash's unique index, its client, session and user by their keys, and the user's identities by the user's index", async () => {
    const plan = await explained(userInfoTokenSql(database.db, "postgres"), "'h1'");
    expect(plan, plan).toMatch(/Index Scan using "?oauthAccessToken_token_key"? on "?oauthAccessToken"? t\b/);
    expect(plan, plan).toMatch(/Index Scan using "?oauthClient_clientId_key"? on "?oauthClient"? c\b/);
    expect(plan, plan).toMatch(/Index Scan using "?session_pkey"? on "?session"? s\b/);
    expect(plan, plan).toMatch(/Index Scan using "?user_pkey"? on "?user"? u\b/);
    expect(plan, plan).toMatch(/Index Scan using "?bapIdentity_userId_idx"? on "?bapIdentity"?/);
    expect(plan, plan).toMatch(/Index Cond: \("?userId"? = t\."?userId"?\)/);
    expect(plan, plan).not.toMatch(/Seq Scan|Hash Join|Merge Join/);
  });

  it("get-session reads the session by its token's unique index, and its user by the primary key", async () => {
    const field = (fieldName?: string) => ({ type: "string" as const, ...(fieldName ? { fieldName } : {}) });
    const statement = sessionWithUserSql("postgres", {
      session: { modelName: "session", fields: { token: field(), userId: field(), expiresAt: { type: "date" } } },
      user: { modelName: "user", fields: { name: field(), email: field() } },
    });
    const plan = await explained(statement!.sql, "'t1'");
    expect(plan, plan).toMatch(/Index Scan using "?session_token_key"? on "?session"? s\b/);
    expect(plan, plan).toMatch(/Index Scan using "?user_pkey"? on "?user"? u\b/);
    expect(plan, plan).not.toMatch(/Seq Scan|Hash Join|Merge Join/);
  });

  it("the refresh grant's read, gathered, reads the user's identities in force by the user's index", async () => {
    const plan = await explained(batchedReadSql(refreshGrantSql(database.db, "postgres"), ["text", "text"]), "array['h1', 'h2'], array['client1', 'client1']");
    expect(plan, plan).toMatch(/Index Scan using "?bapIdentity_userId_idx"? on "?bapIdentity"?/);
    expect(plan, plan).toMatch(/Index Cond: \("?userId"? = t\."?userId"?\)/);
    expect(plan, plan).not.toMatch(/Seq Scan on "?bapIdentity"?/);
  });

  it("the ID token's profile claims gathered for several grants read each user's identities by the user's index, none flattened into a scan", async () => {
    const plan = await explained(batchedRowsSql(identitiesInForceSql(database.db), ["text"]), "array['u1', 'u2']");
    expect(plan, plan).toMatch(/Index Scan using "?bapIdentity_userId_idx"? on "?bapIdentity"?/);
    expect(plan).toMatch(/Index Cond: \("?userId"? = "?__batch"?\."?__p1"?\)/);
    expect(plan, plan).not.toMatch(/Seq Scan on "?bapIdentity"?|Hash Join|Merge Join/);
  });
});
