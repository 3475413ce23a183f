import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * Every table has one owner. oauth-provider's tables, and our record of tokens exchanged under
 * its grants (`oauthTokenExchange`), are read and changed only through plugins/oauth-store
 * (clients.ts, grants.ts, introspection.ts, exchanges.ts over Kysely; adapter.ts inside a
 * better-auth request); better-auth's `session`, `passkey` and `account` tables only through
 * plugins/core-store (sessions.ts, passkeys.ts, accounts.ts over Kysely; adapter.ts inside a
 * better-auth request), and its `user` table and the organization plugin's `organization`,
 * `member` and `invitation` tables through plugins/core-store too (users.ts, organizations.ts).
 * Everything else calls those functions. better-auth's own endpoints and
 * internal adapter (`internalAdapter.deleteSession`, ...) are that table's library, not a query
 * of ours, and are not counted.
 */
interface Family {
  tables: string;
  owner: string;
  /** Queries outside the owner that stay, each with its reason: `file` and the matched text. */
  allowed: ReadonlyArray<{ file: string; query: string; reason: string }>;
}

const FAMILIES: Record<string, Family> = {
  "oauth-provider's tables": {
    tables: "oauth(?:Client|ClientResource|Resource|AccessToken|RefreshToken|Consent|ClientAssertion|TokenExchange)",
    owner: "plugins/oauth-store/",
    allowed: [],
  },
  "better-auth's session, passkey and account tables": {
    tables: "(?:session|passkey|account)",
    owner: "plugins/core-store/",
    allowed: [
      {
        file: "plugins/oauth-store/introspection.ts",
        query: `leftJoin("session`,
        reason: "the fast introspection's one prepared statement joins the token's session (a hot path: no second query)",
      },
      {
        file: "plugins/oauth-store/userinfo.ts",
        query: `leftJoin("session`,
        reason: "the fast userinfo's one prepared statement joins the token's session (a hot path: no second query)",
      },
    ],
  },
  "better-auth's user and organization tables": {
    tables: "(?:user|member|invitation|organization)",
    owner: "plugins/core-store/",
    allowed: [
      {
        file: "plugins/oauth-store/introspection.ts",
        query: `leftJoin("user`,
        reason: "the fast introspection's one prepared statement joins the token's user (a hot path: no second query)",
      },
      {
        file: "plugins/oauth-store/refresh.ts",
        query: `leftJoin("user`,
        reason: "the fast refresh grant's one prepared read joins the token's user, for the ID token (a hot path: no second query)",
      },
      {
        file: "plugins/oauth-store/userinfo.ts",
        query: `leftJoin("user`,
        reason: "the fast userinfo's one prepared statement joins the token's user, for its claims (a hot path: no second query)",
      },
    ],
  },
};

function queryPatterns(tables: string): RegExp[] {
  return [
    // Kysely: a table named where a query starts or joins (`"oauthClient"`, `"oauthClient as c"`).
    new RegExp(String.raw`\b(?:selectFrom|updateTable|insertInto|deleteFrom|replaceInto|mergeInto|(?:inner|left|right|full)Join)\(\s*["'\x60]${tables}\b`, "g"),
    // Kysely: a table named in a raw fragment.
    new RegExp(String.raw`\bsql\.table\(\s*["'\x60]${tables}["'\x60]`, "g"),
    // better-auth's adapter: findOne / update / count ... on the model (a schema's `references` names a field, not a query).
    new RegExp(String.raw`\bmodel:\s*["'\x60]${tables}["'\x60],\s*(?:where|data|update)\b`, "g"),
    // Raw SQL, the table quoted or not.
    new RegExp(String.raw`\b(?:from|join|update|into)\s+(?:"${tables}"|${tables}\b)`, "gi"),
  ];
}

const ROOT = join(import.meta.dirname, "..", "..");
const SOURCES = ["lib", "plugins", "routes", "openapi", "scripts", "schema", "app.ts", "server.ts", "auth.config.ts", "collaborators.ts"];

function sourceFiles(path: string): string[] {
  if (!statSync(path).isDirectory()) return /\.tsx?$/.test(path) ? [path] : [];
  return readdirSync(path).flatMap((name) => sourceFiles(join(path, name)));
}

function queries(family: Family, source: string): string[] {
  return queryPatterns(family.tables).flatMap((pattern) => [...source.matchAll(pattern)].map((m) => m[0]));
}

/** `file: query` for every query on the family's tables outside its owner, allowances included. */
function queriesOutsideOwner(family: Family): string[] {
  return SOURCES.flatMap((entry) => sourceFiles(join(ROOT, entry)))
    .map((file) => relative(ROOT, file))
    .filter((file) => !file.startsWith(family.owner))
    .flatMap((file) => queries(family, readFileSync(join(ROOT, file), "utf8")).map((query) => `${file}: ${query}`));
}

const oauth = FAMILIES["oauth-provider's tables"]!;
const core = FAMILIES["better-auth's session, passkey and account tables"]!;
const people = FAMILIES["better-auth's user and organization tables"]!;

describe("one owner per table family", () => {
  it("finds a query on an oauth-provider table, whichever way it is written", () => {
    expect(queries(oauth, `db.selectFrom("oauthClientResource").select("resourceId")`)).toHaveLength(1);
    expect(queries(oauth, `.innerJoin("oauthClient as c", "c.clientId", "r.clientId")`)).toHaveLength(1);
    expect(queries(oauth, `adapter.count({ model: "oauthClient", where: [] })`)).toHaveLength(1);
    expect(queries(oauth, `sql\`delete from "oauthAccessToken" where 1\``)).toHaveLength(1);
    expect(queries(oauth, `references: { model: "oauthClient", field: "clientId" }`)).toHaveLength(0);
  });

  it("finds a query on better-auth's session, passkey or account table, whichever way it is written", () => {
    expect(queries(core, `db.updateTable("session").set({ subscriptionTier: tier })`)).toHaveLength(1);
    expect(queries(core, `.leftJoin("session as s", "s.id", "t.sessionId")`)).toHaveLength(1);
    expect(queries(core, `db.selectFrom("account").select("id")`)).toHaveLength(1);
    expect(queries(core, `adapter.deleteMany({ model: "passkey", where: [{ field: "userId", value: userId }] })`)).toHaveLength(1);
    expect(queries(core, `adapter.findMany({ model: "account", where: byUser })`)).toHaveLength(1);
    expect(queries(core, `sql\`select token from session where id = \${id}\``)).toHaveLength(1);
    expect(queries(core, `sql\`update "passkey" set name = \${name}\``)).toHaveLength(1);
    expect(queries(core, `sql\`select * from \${sql.table("account")}\``)).toHaveLength(1);
    // Other tables and columns whose names start alike, and schema references, are not queries on these.
    expect(queries(core, `db.selectFrom("accountLink").select("sessionId")`)).toHaveLength(0);
    expect(queries(core, `references: { model: "session", field: "id" }`)).toHaveLength(0);
    expect(queries(core, `c.set("session", session)`)).toHaveLength(0);
  });

  it("finds a query on better-auth's user or organization tables, and not on their look-alikes", () => {
    expect(queries(people, `db.selectFrom("user").select("id")`)).toHaveLength(1);
    expect(queries(people, `db.updateTable("user").set({ pubkey })`)).toHaveLength(1);
    expect(queries(people, `.innerJoin("organization", "organization.id", "member.organizationId")`)).toHaveLength(1);
    expect(queries(people, `db.selectFrom("invitation").select("id")`)).toHaveLength(1);
    expect(queries(people, `sql\`select id from "member" where 1\``)).toHaveLength(1);
    expect(queries(people, `db.selectFrom("userAgent").select("id")`)).toHaveLength(0);
    expect(queries(people, `db.selectFrom("memberKey").select("id")`)).toHaveLength(0);
    expect(queries(people, `references: { model: "user", field: "id" }`)).toHaveLength(0);
  });

  for (const [name, family] of Object.entries(FAMILIES)) {
    it(`only ${family.owner} queries ${name}${family.allowed.length ? " (and the listed exceptions)" : ""}`, () => {
      const exceptions = new Set(family.allowed.map((a) => `${a.file}: ${a.query}`));
      expect(queriesOutsideOwner(family).filter((found) => !exceptions.has(found))).toEqual([]);
    });

    if (family.allowed.length) {
      it(`every exception for ${name} is still there and says why`, () => {
        const found = new Set(queriesOutsideOwner(family));
        for (const a of family.allowed) {
          expect(found, `${a.file}: ${a.query}`).toContain(`${a.file}: ${a.query}`);
          expect(a.reason.length).toBeGreaterThan(20);
        }
      });
    }
  }
});
