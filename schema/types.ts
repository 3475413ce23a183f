import { fileURLToPath } from "node:url";
import { getSchema } from "better-auth/db";
import type { DBFieldType } from "better-auth/db";
import type { DatabaseHandle } from "../lib/db/connection.js";
import { MIGRATION_TABLE, applyMigrations } from "../lib/migrate.js";
import { SCHEMA_DIR } from "../lib/schema-files.js";
import { codeSchemaOptions } from "./generate.js";

/** Where the generated `Database` interface lives. */
export const TABLE_TYPES_FILE = fileURLToPath(new URL("../lib/db/tables.ts", import.meta.url));

/**
 * lib/db/tables.ts, the `Database` interface of every table: the tables and columns, and
 * whether a column may hold NULL, are those the schema/ files create (replayed on `scratch`);
 * each column's logical type is the one the code's schema declares for it (better-auth's,
 * its plugins' and ours), which the SQL alone does not tell (SQLite stores a boolean as an
 * integer, an array as text). A column no field declares reads as its SQL type.
 */
export async function generateTableTypes(scratch: DatabaseHandle, dir = SCHEMA_DIR): Promise<string> {
  await applyMigrations(scratch, dir);
  const declared = new Map<string, Map<string, DBFieldType>>();
  for (const [model, table] of Object.entries(getSchema(codeSchemaOptions(scratch)))) {
    declared.set(model, new Map(Object.entries(table.fields).map(([name, field]) => [field.fieldName ?? name, field.type])));
  }
  const tables = (await scratch.db.introspection.getTables())
    .filter((t) => !t.name.startsWith(MIGRATION_TABLE))
    .sort((a, b) => a.name.localeCompare(b.name));
  const interfaces: string[] = [];
  const kinds: string[] = [];
  for (const table of tables) {
    const fields = declared.get(table.name);
    const columns = table.columns.map((column) => {
      const kind = columnKind(fields?.get(column.name), column.dataType);
      const type = column.isNullable ? `Nullable<${kind.type}>` : kind.type;
      return { name: column.name, type, stored: kind.stored };
    });
    const typeName = `${table.name[0]!.toUpperCase()}${table.name.slice(1)}Table`;
    interfaces.push(`export interface ${typeName} {\n${columns.map((c) => `  ${c.name}: ${c.type};`).join("\n")}\n}`);
    const encoded = columns.filter((c) => c.stored).map((c) => `${c.name}: "${c.stored}"`);
    kinds.push(`  ${quoteKey(table.name)}: { ${encoded.join(", ")} },`);
  }
  const names = tables.map((t) => `  ${quoteKey(t.name)}: ${t.name[0]!.toUpperCase()}${t.name.slice(1)}Table;`);
  return [
    "// Written by `npm run db:types` (schema/types.ts) from the schema/ files and the code's schema: do not edit.",
    "// tests/meta/db-types.test.ts fails when it differs from what they give.",
    `import type { Bool, Json, Nullable, StoredKind, Timestamp } from "./columns.js";`,
    "",
    "/** Every table of the database, as Kysely<Database> reads and writes it. */",
    `export interface Database {\n${names.join("\n")}\n}`,
    "",
    ...interfaces.flatMap((i) => [i, ""]),
    "/** The columns SQLite stores in another form than they are read (see columns.ts), per table. */",
    `export const STORED_KINDS: { readonly [T in keyof Database]: { readonly [C in keyof Database[T]]?: StoredKind } } = {\n${kinds.join("\n")}\n};`,
    "",
  ].join("\n");
}

/** A column's TypeScript type, and how SQLite stores it when that differs from how it is read. */
function columnKind(field: DBFieldType | undefined, sqlType: string): { type: string; stored?: "bool" | "date" | "json" } {
  if (field === "boolean") return { type: "Bool", stored: "bool" };
  if (field === "date") return { type: "Timestamp", stored: "date" };
  if (field === "number") return { type: "number" };
  if (field === "string[]") return { type: "Json<string[]>", stored: "json" };
  if (field === "number[]") return { type: "Json<number[]>", stored: "json" };
  if (field === "json") return { type: "Json<unknown>" };
  if (Array.isArray(field)) return { type: field.map((v) => JSON.stringify(v)).join(" | ") };
  if (field === "string") return { type: "string" };
  // Not a declared field (`id`, or a column the code no longer declares): its SQL type.
  if (/^(integer|int|bigint)$/i.test(sqlType)) return { type: "number" };
  if (/^date$/i.test(sqlType)) return { type: "Timestamp", stored: "date" };
  return { type: "string" };
}

function quoteKey(name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name);
}
