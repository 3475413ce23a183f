import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type DatabaseHandle } from "../../lib/db/connection.js";
import { loadEnv } from "../../lib/env.js";
import { applyMigrations } from "../../lib/migrate.js";
import { findSelectedIdentity, selectedIdentityReader } from "../../plugins/bap-identity/store.js";

/**
 * plugins/bap-identity/store.ts: the prepared reader behind the ID token's and userinfo's
 * profile claims reads a user's identities in force and picks one itself (no ORDER BY, so no
 * SQLite sorter); it must pick what findSelectedIdentity's query picks, on either database.
 */

const dir = mkdtempSync(join(tmpdir(), "idp-identity-"));
const url = process.env.TEST_DATABASE_URL;
let database: DatabaseHandle;
const users: Record<string, string> = {};
const bapIds: Record<string, string> = {};

beforeAll(async () => {
  database = url
    ? createDb(loadEnv({ DATABASE_URL: url, BETTER_AUTH_SECRET: "x".repeat(32), LOG_LEVEL: "silent" }).database)
    : createDb({ kind: "sqlite", file: join(dir, "t.sqlite") });
  // PostgreSQL's schema is applied once by the global setup; each SQLite file migrates itself.
  if (!url) await applyMigrations(database);
  const run = randomUUID().slice(0, 8);
  const at = (minutes: number) => new Date(Date.UTC(2026, 0, 1, 0, minutes));
  // Each user's identities: [name, isPrimary, created (minutes), suspended].
  const plan: Record<string, [string, boolean, number, boolean][]> = {
    none: [],
    unmarked: [["late", false, 5, false], ["early", false, 1, false], ["middle", false, 3, false]],
    marked: [["first", false, 0, false], ["chosen", true, 9, false], ["other", false, 4, false]],
    suspendedPrimary: [["held", true, 0, true], ["next", false, 2, false], ["last", false, 7, false]],
    onlySuspended: [["held", false, 1, true]],
  };
  for (const [user, identities] of Object.entries(plan)) {
    const userId = (users[user] = `u-${run}-${user}`);
    await database.db.insertInto("user").values({ id: userId, name: user, email: `${userId}@example.com`, emailVerified: false, createdAt: at(0), updatedAt: at(0) }).execute();
    for (const [name, isPrimary, minutes, suspended] of identities) {
      const bapId = (bapIds[`${user}/${name}`] = `bap-${run}-${user}-${name}`);
      await database.db
        .insertInto("bapIdentity")
        .values({ id: randomUUID(), userId, bapId, rootAddress: `root-${bapId}`, isPrimary, suspendedAt: suspended ? at(30) : null, createdAt: at(minutes), updatedAt: at(minutes) })
        .execute();
    }
  }
});

afterAll(async () => {
  if (url) {
    await database.db.deleteFrom("bapIdentity").where("userId", "in", Object.values(users)).execute();
    await database.db.deleteFrom("user").where("id", "in", Object.values(users)).execute();
  }
  await database.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("selectedIdentityReader", () => {
  it("picks the primary identity in force, else the first registered in force", async () => {
    const read = selectedIdentityReader(database);
    expect(await read(users.none!)).toBeNull();
    expect((await read(users.unmarked!))?.bapId).toBe(bapIds["unmarked/early"]);
    expect((await read(users.marked!))?.bapId).toBe(bapIds["marked/chosen"]);
    expect((await read(users.suspendedPrimary!))?.bapId).toBe(bapIds["suspendedPrimary/next"]);
    expect(await read(users.onlySuspended!)).toBeNull();
  });

  it("prefers the selected identity when it is the user's and in force", async () => {
    const read = selectedIdentityReader(database);
    expect((await read(users.marked!, bapIds["marked/other"]))?.bapId).toBe(bapIds["marked/other"]);
    // Suspended, someone else's or unknown: the primary one in force instead.
    expect((await read(users.suspendedPrimary!, bapIds["suspendedPrimary/held"]))?.bapId).toBe(bapIds["suspendedPrimary/next"]);
    expect((await read(users.marked!, bapIds["unmarked/late"]))?.bapId).toBe(bapIds["marked/chosen"]);
    expect((await read(users.marked!, "no-such-identity"))?.bapId).toBe(bapIds["marked/chosen"]);
  });

  it("answers what findSelectedIdentity's query answers, for every user and selection", async () => {
    const read = selectedIdentityReader(database);
    const selections = [undefined, null, "no-such-identity", ...Object.values(bapIds)];
    let compared = 0;
    for (const userId of Object.values(users)) {
      for (const referenceId of selections) {
        expect(await read(userId, referenceId)).toEqual(await findSelectedIdentity(database.db, userId, referenceId));
        compared++;
      }
    }
    expect(compared).toBe(Object.keys(users).length * selections.length);
  });
});
