import { AsyncLocalStorage } from "node:async_hooks";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import SQLite from "better-sqlite3";
import { sql, type Generated } from "kysely";
import { afterAll, describe, expect, it } from "vitest";
import { createDb } from "../../lib/db/connection.js";
import { UniqueViolation } from "../../lib/errors.js";
import { useTestServer } from "../helpers/fixtures.js";
import { signUp } from "../helpers/oauth.js";

/**
 * lib/db/dialects.ts, SQLite: the background checkpointer copies committed pages from the
 * write-ahead log into the database file from a worker thread. Pages reach the main file
 * only through a checkpoint, and the connection's own auto-checkpoint waits for 10,000
 * pages (~40 MiB), so a megabyte of writes shows up in the main file only if the worker
 * ran.
 */

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function writeAMegabyte(backgroundCheckpoint: boolean) {
  const dir = mkdtempSync(join(tmpdir(), "idp-db-"));
  dirs.push(dir);
  const file = join(dir, "t.sqlite");
  const database = createDb({ kind: "sqlite", file }, { backgroundCheckpoint });
  await sql`create table blob (id integer primary key, data text not null)`.execute(database.db);
  const db = database.db.withTables<{ blob: { id: Generated<number>; data: string } }>();
  const before = statSync(file).size;
  for (let i = 0; i < 64; i++) await db.insertInto("blob").values({ data: "x".repeat(16 * 1024) }).execute();
  return { database, db, file, before };
}

async function eventually(check: () => boolean, ms: number) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

describe("SQLite background checkpoint", () => {
  it("moves committed pages into the database file without a request paying for it", async () => {
    const { database, db, file, before } = await writeAMegabyte(true);
    try {
      expect(await eventually(() => statSync(file).size >= before + 1024 * 1024, 3000)).toBe(true);
      // The data is intact and the connection keeps working after checkpoints.
      const row = await db.selectFrom("blob").select((eb) => eb.fn.countAll().as("n")).executeTakeFirst();
      expect(Number(row?.n)).toBe(64);
      await db.insertInto("blob").values({ data: "after" }).execute();
    } finally {
      await database.close();
    }
  });

  it("without it, the pages stay in the WAL until the connection's own threshold", async () => {
    const { database, file, before } = await writeAMegabyte(false);
    try {
      await new Promise((r) => setTimeout(r, 1000));
      expect(statSync(file).size).toBeLessThan(before + 1024 * 1024);
      expect(statSync(`${file}-wal`).size).toBeGreaterThan(1024 * 1024);
    } finally {
      await database.close();
    }
  });

  it("close() stops the worker and the file reopens with every row", async () => {
    const { database, file } = await writeAMegabyte(true);
    await database.close();
    const again = createDb({ kind: "sqlite", file });
    try {
      const row = await again.db.withTables<{ blob: { id: number } }>().selectFrom("blob").select((eb) => eb.fn.countAll().as("n")).executeTakeFirst();
      expect(Number(row?.n)).toBe(64);
    } finally {
      await again.close();
    }
  });
});

/**
 * lib/db/sqlite-values.ts: our own queries write plain booleans and Dates on either database. On SQLite
 * they are stored as better-auth's adapter stores its own (0/1, ISO-8601 text), so better-auth
 * reads them back; values already in that shape are not encoded twice.
 */
describe("booleans and dates in our queries", () => {
  const server = useTestServer();

  it("are stored as better-auth stores them, filter as plain values, and better-auth reads them back", async () => {
    const { email, password, user } = await signUp(server);
    const at = new Date("2030-01-02T03:04:05.678Z");
    await server.db.updateTable("user").set({ emailVerified: true, updatedAt: at }).where("id", "=", user.id).execute();
    const found = await server.db.selectFrom("user").select("id").where("id", "=", user.id).where("emailVerified", "=", true).where("updatedAt", "in", [at]).executeTakeFirst();
    expect(found?.id).toBe(user.id);

    const signIn = await server.api("/api/auth/sign-in/email", { body: { email, password } });
    expect(signIn.status).toBe(200);
    expect(signIn.json.user.emailVerified).toBe(true);
    expect(new Date(signIn.json.user.updatedAt).toISOString()).toBe(at.toISOString());

    if (server.dbType === "sqlite") {
      const stored = sql<Record<string, unknown>>`select typeof("emailVerified") as b, "emailVerified" as v, typeof("updatedAt") as d, "updatedAt" as u from "user" where "id" = ${user.id}`;
      expect((await stored.execute(server.db)).rows[0]).toEqual({ b: "integer", v: 1, d: "text", u: at.toISOString() });
      // What better-auth's adapter sends (already 0/1 and ISO text) passes unchanged.
      await sql`update "user" set "emailVerified" = ${0}, "updatedAt" = ${"2031-01-01T00:00:00.000Z"} where "id" = ${user.id}`.execute(server.db);
      expect((await stored.execute(server.db)).rows[0]).toEqual({ b: "integer", v: 0, d: "text", u: "2031-01-01T00:00:00.000Z" });
    }
  });
});

describe("Database.atomically (one transaction on one connection)", () => {
  async function fresh() {
    const dir = mkdtempSync(join(tmpdir(), "idp-db-"));
    dirs.push(dir);
    const database = createDb({ kind: "sqlite", file: join(dir, "t.sqlite") });
    await sql`create table item (id integer primary key, name text not null)`.execute(database.db);
    const db = database.db.withTables<{ item: { id: Generated<number>; name: string } }>();
    const names = async () => (await db.selectFrom("item").select("name").orderBy("id").execute()).map((r) => r.name);
    const add = (name: string) => db.insertInto("item").values({ name }).execute();
    return { database, db, names, add };
  }

  it("keeps every write when it succeeds, none when it throws half-way or the answer is not kept", async () => {
    const { database, names, add } = await fresh();
    await database.atomically(async () => {
      await add("a");
      await add("b");
    });
    await expect(
      database.atomically(async () => {
        await add("c");
        throw new Error("cut half-way");
      }),
    ).rejects.toThrow("cut half-way");
    const answer = await database.atomically(
      async () => {
        await add("d");
        return 503;
      },
      (status) => status < 500,
    );
    expect(answer).toBe(503);
    expect(await names()).toEqual(["a", "b"]);
    await database.close();
  });

  it("a statement that failed inside it, even if caught, rolls the whole unit back and is thrown", async () => {
    const { database, db, names } = await fresh();
    await db.insertInto("item").values({ id: 1, name: "first" }).execute();
    await expect(
      database.atomically(async () => {
        await db.insertInto("item").values({ id: 2, name: "second" }).execute();
        await db.insertInto("item").values({ id: 1, name: "clash" }).execute().catch(() => {});
        return 200;
      }),
    ).rejects.toThrow();
    expect(await names()).toEqual(["first"]);
    await database.close();
  });

  it("runs a transaction inside it as a savepoint, and other requests' queries wait for it instead of deadlocking", async () => {
    const { database, db, names, add } = await fresh();
    let outside: Promise<string[]> | undefined;
    // Runs a function in the async context of this line: outside the unit, like another request.
    const elsewhere = AsyncLocalStorage.snapshot();
    await database.atomically(async () => {
      // Reads before the first write hold no connection: work of another request that reads,
      // awaited here, is not stuck behind the unit.
      expect(await names()).toEqual([]);
      expect(await elsewhere(() => names())).toEqual([]);
      await add("outer");
      await expect(
        db.transaction().execute(async (trx) => {
          await trx.insertInto("item").values({ name: "inner, rolled back" }).execute();
          throw new Error("inner");
        }),
      ).rejects.toThrow("inner");
      await db.transaction().execute((trx) => trx.insertInto("item").values({ name: "inner" }).execute());
      // Another async context (another request) queues for the single SQLite connection.
      outside = elsewhere(() => names());
      await new Promise((r) => setTimeout(r, 20));
      await Promise.all([add("parallel 1"), add("parallel 2")]);
    });
    // The other request saw the unit's writes only once it committed.
    expect(await outside).toEqual(["outer", "inner", "parallel 1", "parallel 2"]);
    await database.close();
  });

  it("transactNow runs statements at once as one transaction, and stands aside while another transaction is open", async () => {
    const { database, db, names, add } = await fresh();
    const insert = "insert into item (name) values (?)";
    expect(database.transactNow!((run) => [run(insert, ["now 1"]), run(insert, ["now 2"])])).toEqual({ value: [1, 1] });
    // A throw half-way rolls the transaction back and reaches the caller.
    expect(() =>
      database.transactNow!((run) => {
        run(insert, ["cut"]);
        throw new Error("cut half-way");
      }),
    ).toThrow("cut half-way");
    expect(await names()).toEqual(["now 1", "now 2"]);

    // Another request's transaction, held open across an await: transactNow does not join it.
    const elsewhere = AsyncLocalStorage.snapshot();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const other = db.transaction().execute(async (trx) => {
      await trx.insertInto("item").values({ name: "other" }).execute();
      await held;
      throw new Error("other rolled back");
    });
    await new Promise((r) => setTimeout(r, 20));
    expect(elsewhere(() => database.transactNow!((run) => run(insert, ["joined?"])))).toBeUndefined();
    release();
    await expect(other).rejects.toThrow("other rolled back");
    expect(await names()).toEqual(["now 1", "now 2"]);

    // Inside a unit of work it stands aside too: the unit's own statements go through atomically.
    await database.atomically(async () => {
      await add("unit");
      expect(database.transactNow!((run) => run(insert, ["inside"]))).toBeUndefined();
    });
    expect(await names()).toEqual(["now 1", "now 2", "unit"]);
    await database.close();
  });

  it("transactSoon gathers one turn's work into one transaction, and a failing part fails alone", async () => {
    const { database, names } = await fresh();
    const insert = "insert into item (name) values (?)";
    const count = "select count(*) as n from item";
    // Another connection to the same file sees only what was committed.
    const dir = dirs.at(-1)!;
    const other = new SQLite(join(dir, "t.sqlite"), { readonly: true });
    const committed = () => (other.prepare(count).get() as { n: number }).n;
    let seen: { own: unknown; committed: number } | undefined;
    const first = database.transactSoon!((run) => run(insert, ["soon 1"]));
    const second = database.transactSoon!((run) => {
      run(insert, ["soon 2"]);
      // Inside the batch: the first one's row is there on this connection, not yet committed.
      seen = { own: database.readRowNow!(count, [])?.n, committed: committed() };
      return "second";
    });
    expect(await Promise.all([first, second])).toEqual([{ value: 1 }, { value: "second" }]);
    expect(seen).toEqual({ own: 2, committed: 0 });
    expect(committed()).toBe(2);

    // A throw in one part: the others commit, only its own caller sees the error.
    const results = await Promise.allSettled([
      database.transactSoon!((run) => run(insert, ["kept 1"])),
      database.transactSoon!((run) => {
        run(insert, ["cut"]);
        throw new Error("cut half-way");
      }),
      database.transactSoon!((run) => run(insert, ["kept 2"])),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(((results[1] as PromiseRejectedResult).reason as Error).message).toBe("cut half-way");
    expect(await names()).toEqual(["soon 1", "soon 2", "kept 1", "kept 2"]);

    // Inside a unit of work it stands aside, as transactNow does.
    await database.atomically(async () => {
      expect(await database.transactSoon!((run) => run(insert, ["inside"]))).toBeUndefined();
    });
    expect(await names()).toEqual(["soon 1", "soon 2", "kept 1", "kept 2"]);
    other.close();
    await database.close();
  });
});

describe.runIf(Boolean(process.env.TEST_DATABASE_URL))("Database.atomically on PostgreSQL, after a statement of the unit failed", () => {
  it("a read still answers (outside the aborted transaction), a write meets the unit's failure, and nothing is kept", async () => {
    const database = createDb({ kind: "postgres", url: process.env.TEST_DATABASE_URL! });
    // A table of this test's own: other test files share the database.
    const table = `idp_unit_${randomBytes(6).toString("hex")}`;
    await sql`create table ${sql.table(table)} (id integer primary key, name text not null)`.execute(database.db);
    const db = database.db.withTables<Record<string, { id: number; name: string }>>();
    const names = async () => (await db.selectFrom(table).select("name").orderBy("id").execute()).map((r) => r.name);
    try {
      await db.insertInto(table).values({ id: 1, name: "first" }).execute();
      let read: string[] | undefined;
      let write: unknown;
      await expect(
        database.atomically(async () => {
          await db.insertInto(table).values({ id: 2, name: "second" }).execute();
          await db.insertInto(table).values({ id: 1, name: "clash" }).execute().catch(() => {});
          // Inside the aborted transaction this read was refused (25P02), a 500 for an error path that looks something up.
          read = await names();
          write = await db.insertInto(table).values({ id: 3, name: "third" }).execute().catch((err: unknown) => err);
          return 200;
        }),
      ).rejects.toBeInstanceOf(UniqueViolation);
      expect(read).toEqual(["first"]);
      expect(write).toBeInstanceOf(UniqueViolation);
      expect(await names()).toEqual(["first"]);
    } finally {
      await sql`drop table ${sql.table(table)}`.execute(database.db);
      await database.close();
    }
  });
});

describe("the lanes' SQLite rows (readRowNow, readRowsNow)", () => {
  it("carry every column under its name, whatever the name, as plain objects", async () => {
    const dir = mkdtempSync(join(tmpdir(), "idp-db-"));
    dirs.push(dir);
    const database = createDb({ kind: "sqlite", file: join(dir, "rows.sqlite") });
    // Names a literal would misread if written out naively: quotes, a backslash, a line and
    // paragraph separator, a number, a duplicate (the last wins, as key-by-key assignment),
    // and enough of them (40) that a row built key by key left V8's fast objects.
    const odd = [`a"b`, "c\\d", "e\u2028f\u2029g", "0", "x", "x", "constructor", "toString"];
    const names = [...odd, ...Array.from({ length: 32 }, (_, i) => `col${i}`)];
    const select = `select ${names.map((name, i) => `${i} as "${name.replaceAll('"', '""')}"`).join(", ")}`;
    const row = database.readRowNow!(select, [])!;
    const expected: Record<string, unknown> = {};
    names.forEach((name, i) => (expected[name] = i));
    expect(row).toEqual(expected);
    expect(Object.keys(row)).toEqual(Object.keys(expected));
    expect(Object.getPrototypeOf(row)).toBe(Object.prototype);
    expect(row.x).toBe(5);
    const rows = database.readRowsNow!(`${select} union all ${select.replace("select 0 as", "select 100 as")}`, []);
    expect(rows.map((r) => r[`a"b`])).toEqual([0, 100]);

    // A column named __proto__ is an own field, never the row's prototype.
    const proto = database.readRowNow!(`select json('{"polluted": true}') as "__proto__", 1 as one`, [])!;
    expect(Object.getOwnPropertyNames(proto)).toEqual(["__proto__", "one"]);
    expect(Object.getPrototypeOf(proto)).toBe(Object.prototype);
    expect((proto as { polluted?: unknown }).polluted).toBeUndefined();
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    await database.close();
  });
});

describe("SQLite's change stamp (changeStamp)", () => {
  it("moves on every write of this connection and every commit of another, reads leave it, and a transaction has none", async () => {
    const dir = mkdtempSync(join(tmpdir(), "idp-db-"));
    dirs.push(dir);
    const file = join(dir, "stamp.sqlite");
    const database = createDb({ kind: "sqlite", file });
    await sql`create table stamped (id integer primary key, v text)`.execute(database.db);
    const stamp = () => database.changeStamp!();
    const same = (a: ReturnType<typeof stamp>, b: ReturnType<typeof stamp>) => a !== null && b !== null && a.version === b.version && a.changes === b.changes;

    const start = stamp();
    expect(start).not.toBeNull();
    // Reads, through either path, leave it as it is.
    database.readRowNow!("select count(*) as n from stamped", []);
    await sql`select * from stamped`.execute(database.db);
    expect(same(stamp(), start)).toBe(true);

    // This connection's write, through Kysely or the lanes' transactions.
    await sql`insert into stamped (v) values ('mine')`.execute(database.db);
    const afterMine = stamp();
    expect(same(afterMine, start)).toBe(false);
    database.transactNow!((run) => run("update stamped set v = ? where v = ?", ["mine again", "mine"]));
    const afterLane = stamp();
    expect(same(afterLane, afterMine)).toBe(false);

    // Another connection's commit (another process on the same file), and its read does nothing.
    const other = new SQLite(file);
    other.prepare("select count(*) from stamped").get();
    expect(same(stamp(), afterLane)).toBe(true);
    other.prepare("update stamped set v = 'theirs'").run();
    const afterTheirs = stamp();
    expect(same(afterTheirs, afterLane)).toBe(false);
    // A rolled-back transaction of another connection commits nothing.
    other.exec("begin immediate; update stamped set v = 'never'; rollback");
    expect(same(stamp(), afterTheirs)).toBe(true);
    other.close();

    // Inside a transaction of this connection: none (what is read may still be rolled back).
    await database.db
      .transaction()
      .execute(async (trx) => {
        await sql`update stamped set v = 'rolled back'`.execute(trx);
        expect(stamp()).toBeNull();
        throw new Error("roll back");
      })
      .catch(() => undefined);
    // Rolled back, yet the stamp moved: the row read inside may have been the rolled-back one.
    expect(database.readRowNow!("select v from stamped", [])!.v).toBe("theirs");
    expect(same(stamp(), afterTheirs)).toBe(false);
    await database.close();
  });
});
