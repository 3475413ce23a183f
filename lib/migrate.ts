import type { BetterAuthOptions } from "better-auth";
import { getMigrations } from "better-auth/db/migration";

export interface MigrationPlan {
  /** Tables and columns still to create, as `table` or `table.column`. */
  pending: string[];
  /** SQL that brings the database up to date (empty when nothing is pending). */
  sql(): Promise<string>;
  apply(): Promise<void>;
}

/**
 * The schema lives in code: better-auth's tables plus our plugins' fields. The plan is
 * computed against the live database, so running it twice is a no-op.
 */
export async function planMigrations(options: BetterAuthOptions): Promise<MigrationPlan> {
  const { toBeCreated, toBeAdded, toBeAddedIndexes, compileMigrations, runMigrations } = await getMigrations(options);
  const pending = [
    ...toBeCreated.map((t) => t.table),
    ...toBeAdded.flatMap((t) => Object.keys(t.fields).map((f) => `${t.table}.${f}`)),
    ...toBeAddedIndexes.map((i) => `index ${i.name}`),
  ];
  return {
    pending,
    sql: () => (pending.length ? compileMigrations() : Promise.resolve("")),
    apply: () => (pending.length ? runMigrations() : Promise.resolve()),
  };
}
