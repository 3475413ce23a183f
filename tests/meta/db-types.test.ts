import { appendFileSync, cpSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { SCHEMA_DIR } from "../../lib/schema-files.js";
import { scratchSqlite } from "../../schema/generate.js";
import { generateTableTypes, TABLE_TYPES_FILE } from "../../schema/types.js";
import { useTempDirs } from "../helpers/fixtures.js";

/**
 * lib/db/tables.ts (`npm run db:types`) is the one description of every table, and every
 * query goes through it: a column renamed or dropped in schema/ fails tsc where a query
 * still names it, not a request.
 */

const ROOT = join(import.meta.dirname, "..", "..");
const tempDir = useTempDirs("idp-db-types-");

async function generate(dir = SCHEMA_DIR): Promise<string> {
  const scratch = scratchSqlite();
  try {
    return await generateTableTypes(scratch, dir);
  } finally {
    await scratch.close();
  }
}

describe("lib/db/tables.ts", () => {
  it("is what schema/ and the code's schema give (run npm run db:types after db:generate)", async () => {
    expect(readFileSync(TABLE_TYPES_FILE, "utf8")).toBe(await generate());
  });

  it("follows a change in schema/: a new column appears, with its nullability", async () => {
    const dir = tempDir();
    cpSync(SCHEMA_DIR, dir, { recursive: true });
    const last = readdirSync(join(dir, "sqlite")).sort().at(-1)!;
    appendFileSync(join(dir, "sqlite", last), `\nalter table "jobLease" add column "note" text;\n`);
    const changed = await generate(dir);
    expect(changed).not.toBe(readFileSync(TABLE_TYPES_FILE, "utf8"));
    expect(changed).toMatch(/export interface JobLeaseTable \{[^}]*\bnote: Nullable<string>;/);
  });

  it("types what SQLite stores in another form by the code's schema, not by the SQL", async () => {
    const text = readFileSync(TABLE_TYPES_FILE, "utf8");
    expect(text).toMatch(/export interface UserTable \{[^}]*\bemailVerified: Bool;/);
    expect(text).toMatch(/export interface OauthAccessTokenTable \{[^}]*\bscopes: Json<string\[\]>;/);
    expect(text).toMatch(/export interface SessionTable \{[^}]*\bexpiresAt: Timestamp;/);
  });
});

/** Query builders over an untyped database: the column names they use are checked by nothing. */
const UNTYPED = new RegExp(String.raw`\b(?:Kysely|Transaction|(?:Select|Insert|Update|Delete)QueryBuilder|ExpressionBuilder)<\s*any\b`);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (name === "node_modules" || name.startsWith(".")) return [];
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(name) ? [path] : [];
  });
}

describe("Kysely<Database> everywhere", () => {
  it("no query builder in the repository is over `any`", () => {
    const found = sourceFiles(ROOT).flatMap((file) =>
      readFileSync(file, "utf8")
        .split("\n")
        .flatMap((line, i) => (UNTYPED.test(line) ? [`${relative(ROOT, file)}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(found).toEqual([]);
  });
});
