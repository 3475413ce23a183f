import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * Every table has one owner. oauth-provider's tables are read and changed only through
 * plugins/oauth-store (clients.ts, grants.ts, introspection.ts over Kysely; adapter.ts inside
 * a better-auth request); everything else calls those functions.
 */
const OAUTH_TABLES = "oauth(?:Client|ClientResource|Resource|AccessToken|RefreshToken|Consent|ClientAssertion)";
const OWNER = "plugins/oauth-store/";
const QUERIES = [
  // Kysely: a table named where a query starts or joins (`"oauthClient"`, `"oauthClient as c"`).
  new RegExp(String.raw`\b(?:selectFrom|updateTable|insertInto|deleteFrom|replaceInto|mergeInto|(?:inner|left|right|full)Join)\(\s*["'\x60]${OAUTH_TABLES}\b`, "g"),
  // better-auth's adapter: findOne / update / count ... on the model (a schema's `references` names a field, not a query).
  new RegExp(String.raw`\bmodel:\s*["'\x60]${OAUTH_TABLES}["'\x60],\s*(?:where|data|update)\b`, "g"),
  // Raw SQL.
  new RegExp(String.raw`\b(?:from|join|update|into)\s+"${OAUTH_TABLES}"`, "gi"),
];
const ROOT = join(import.meta.dirname, "..", "..");
const SOURCES = ["lib", "plugins", "routes", "openapi", "scripts", "schema", "app.ts", "server.ts", "auth.config.ts", "collaborators.ts"];

function sourceFiles(path: string): string[] {
  if (!statSync(path).isDirectory()) return /\.tsx?$/.test(path) ? [path] : [];
  return readdirSync(path).flatMap((name) => sourceFiles(join(path, name)));
}

function oauthQueries(source: string): string[] {
  return QUERIES.flatMap((pattern) => [...source.matchAll(pattern)].map((m) => m[0]));
}

describe("one owner per table family", () => {
  it("finds a query on an oauth-provider table, whichever way it is written", () => {
    expect(oauthQueries(`db.selectFrom("oauthClientResource").select("resourceId")`)).toHaveLength(1);
    expect(oauthQueries(`.innerJoin("oauthClient as c", "c.clientId", "r.clientId")`)).toHaveLength(1);
    expect(oauthQueries(`adapter.count({ model: "oauthClient", where: [] })`)).toHaveLength(1);
    expect(oauthQueries(`sql\`delete from "oauthAccessToken" where 1\``)).toHaveLength(1);
    expect(oauthQueries(`references: { model: "oauthClient", field: "clientId" }`)).toHaveLength(0);
  });

  it("only plugins/oauth-store queries oauth-provider's tables", () => {
    const found = SOURCES.flatMap((entry) => sourceFiles(join(ROOT, entry)))
      .map((file) => relative(ROOT, file))
      .filter((file) => !file.startsWith(OWNER))
      .flatMap((file) => oauthQueries(readFileSync(join(ROOT, file), "utf8")).map((query) => `${file}: ${query}`));
    expect(found).toEqual([]);
  });
});
