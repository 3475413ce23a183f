import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type DatabaseHandle } from "../../lib/db/connection.js";
import { batchedReadSql, gathered, gatheredRowReader, gatheredRowsReader } from "../../lib/db/gather.js";
import { postgresRotator } from "../../plugins/oauth-store/refresh-postgres.js";

/**
 * lib/db/gather.ts: work queued in one turn of the event loop runs as one statement; alone, an
 * item runs as itself; a failing batch runs again item by item, so only the bad item fails. On
 * PostgreSQL, the refresh grant's rotations and the lanes' reads go through it
 * (plugins/oauth-store/refresh-postgres.ts, gatheredRowReader).
 */

function recorder(fail?: (item: number) => boolean) {
  const calls: { one: number[]; all: number[][] } = { one: [], all: [] };
  const run = gathered<number, number>({
    async one(item) {
      calls.one.push(item);
      if (fail?.(item)) throw new Error(`bad ${item}`);
      return item * 10;
    },
    async all(items) {
      calls.all.push([...items]);
      if (items.some((item) => fail?.(item))) throw new Error("batch failed");
      return items.map((item) => item * 10);
    },
    max: 3,
  });
  return { run, calls };
}

describe("gathered", () => {
  it("runs the items of one turn as batches of at most `max`, in order, and answers each its own", async () => {
    const { run, calls } = recorder();
    expect(await Promise.all([1, 2, 3, 4].map(run))).toEqual([10, 20, 30, 40]);
    expect(calls.all).toEqual([[1, 2, 3]]);
    // The fourth, alone in its batch, runs as itself.
    expect(calls.one).toEqual([4]);
  });

  it("runs an item alone when nothing else was queued in its turn, and the next turn's separately", async () => {
    const { run, calls } = recorder();
    expect(await run(7)).toBe(70);
    expect(await run(8)).toBe(80);
    expect(calls).toEqual({ one: [7, 8], all: [] });
  });

  it("when a batch fails, runs each item again alone: only the bad one fails", async () => {
    const { run, calls } = recorder((item) => item === 2);
    const answers = await Promise.allSettled([1, 2, 3].map(run));
    expect(answers.map((a) => a.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect((answers[1] as PromiseRejectedResult).reason.message).toBe("bad 2");
    expect(calls.all).toEqual([[1, 2, 3]]);
    expect(calls.one).toEqual([1, 2, 3]);
  });

  it("treats a batch that answers the wrong number of results as failed", async () => {
    const ones: number[] = [];
    const run = gathered<number, number>({
      one: async (item) => (ones.push(item), item),
      all: async (items) => items.slice(1),
    });
    expect(await Promise.all([5, 6].map(run))).toEqual([5, 6]);
    expect(ones).toEqual([5, 6]);
  });
});

describe("batchedReadSql", () => {
  it("runs the one-row statement per parameter list as a lateral subquery, every placeholder a column of the list", () => {
    const sql = batchedReadSql(`select "a"."x" from "a" where "a"."y" = $1 and "a"."z" = $10`, Array.from({ length: 10 }, () => "text"));
    expect(sql).toContain(`from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[]) with ordinality as "__batch"(`);
    expect(sql).toContain(`cross join lateral (select "a"."x" from "a" where "a"."y" = "__batch"."__p1" and "a"."z" = "__batch"."__p10" limit 1) as "__row"`);
    expect(() => batchedReadSql("update a set b = $1", ["text"])).toThrow(/not a select/);
  });
});

const url = process.env.TEST_DATABASE_URL;

describe.runIf(url)("on PostgreSQL", () => {
  let database: DatabaseHandle;
  const run = randomUUID().slice(0, 8);
  const userId = `u-${run}`;
  const clientId = `c-${run}`;

  beforeAll(async () => {
    database = createDb({ kind: "postgres", url: url! });
    const now = new Date();
    await database.db.insertInto("user").values({ id: userId, name: "g", email: `${userId}@example.com`, emailVerified: true, createdAt: now, updatedAt: now }).execute();
    await database.db.insertInto("oauthClient").values({ id: clientId, clientId, redirectUris: "[]", createdAt: now, updatedAt: now } as never).execute();
  });

  afterAll(async () => {
    await database.db.deleteFrom("oauthClient").where("clientId", "=", clientId).execute();
    await database.db.deleteFrom("user").where("id", "=", userId).execute();
    await database.close();
  });

  async function token(id: string, revoked: Date | null = null) {
    const now = new Date();
    await database.db
      .insertInto("oauthRefreshToken")
      .values({ id, token: `hash-${id}`, clientId, userId, expiresAt: new Date(Date.now() + 3_600_000), createdAt: now, revoked, scopes: JSON.stringify(["openid"]) } as never)
      .execute();
  }

  const rotation = (previousId: string, suffix: string, user = userId) => {
    const now = new Date(Math.floor(Date.now() / 1000) * 1000);
    const later = new Date(now.getTime() + 3_600_000);
    return [now, previousId, `r-${suffix}`, `rh-${suffix}`, clientId, null, user, null, null, null, JSON.stringify(["openid"]), now, later, `a-${suffix}`, `ah-${suffix}`, later];
  };

  it("rotates several tokens in one turn; a token presented twice rotates once, a revoked one not at all", async () => {
    const ids = ["p1", "p2", "p3", "p4"].map((p) => `${p}-${run}`);
    await token(ids[0]!);
    await token(ids[1]!);
    await token(ids[2]!, new Date());
    await token(ids[3]!);
    const rotate = postgresRotator(database);
    const answers = await Promise.allSettled([
      rotate(rotation(ids[0]!, `1-${run}`)),
      rotate(rotation(ids[1]!, `2-${run}`)),
      rotate(rotation(ids[1]!, `2b-${run}`)),
      rotate(rotation(ids[2]!, `3-${run}`)),
      // Its user does not exist: the batch fails, and each runs again alone.
      rotate(rotation(ids[3]!, `4-${run}`, `nobody-${run}`)),
    ]);
    const outcome = answers.map((a) => (a.status === "fulfilled" ? a.value : "error"));
    // The bad one fails alone; the others answer as if each had run by itself (of the two uses
    // of p2, whichever ran first).
    expect(outcome[0]).toBe(true);
    expect([outcome[1], outcome[2]].sort()).toEqual([false, true]);
    expect(outcome.slice(3)).toEqual([false, "error"]);
    // Rotated now: presented again, in a batch that does not fail, they answer false.
    const again = await Promise.all([rotate(rotation(ids[0]!, `1x-${run}`)), rotate(rotation(ids[1]!, `2x-${run}`))]);
    expect(again).toEqual([false, false]);
    // In a batch that succeeds, the first use of a token presented twice rotates it, the second answers false.
    await token(`p5-${run}`);
    await token(`p6-${run}`);
    expect(await Promise.all([rotate(rotation(`p5-${run}`, `5-${run}`)), rotate(rotation(`p5-${run}`, `5b-${run}`)), rotate(rotation(`p6-${run}`, `6-${run}`))])).toEqual([true, false, true]);
    const rows = await database.db.selectFrom("oauthRefreshToken").select(["id", "revoked", "rotatedAt"]).where("clientId", "=", clientId).execute();
    const byId = new Map(rows.map((row) => [row.id, row]));
    expect(byId.get(ids[0]!)?.rotatedAt).not.toBeNull();
    expect(byId.get(ids[1]!)?.rotatedAt).not.toBeNull();
    expect(byId.has(`r-1-${run}`)).toBe(true);
    // Exactly one of the two uses of p2 got a new token.
    expect([byId.has(`r-2-${run}`), byId.has(`r-2b-${run}`)].filter(Boolean)).toHaveLength(1);
    // The revoked one stays as it was; the failed one is untouched.
    expect(byId.get(ids[2]!)?.rotatedAt).toBeNull();
    expect(byId.has(`r-3-${run}`)).toBe(false);
    expect(byId.get(ids[3]!)?.revoked).toBeNull();
    expect(byId.has(`r-4-${run}`)).toBe(false);
    expect(byId.has(`r-5-${run}`) && byId.has(`r-6-${run}`) && !byId.has(`r-5b-${run}`)).toBe(true);
    const access = await database.db.selectFrom("oauthAccessToken").select(["id", "refreshId"]).where("clientId", "=", clientId).execute();
    expect(access.map((a) => a.refreshId).sort()).toEqual([...byId.keys()].filter((id) => id.startsWith("r-")).sort());
  });

  it("answers each of several reads in one turn its own row, and none for a list that finds nothing", async () => {
    await token(`q1-${run}`);
    await token(`q2-${run}`);
    const read = gatheredRowReader(database, `test_gather_${run}`, `select "t"."id" from "oauthRefreshToken" as "t" where "t"."token" = $1 and "t"."clientId" = $2`, ["text", "text"]);
    const rows = await Promise.all([
      read([`hash-q2-${run}`, clientId]),
      read([`hash-q1-${run}`, clientId]),
      read([`hash-q1-${run}`, `other-${run}`]),
      read(["no such hash", clientId]),
    ]);
    expect(rows.map((row) => row?.id ?? null)).toEqual([`q2-${run}`, `q1-${run}`, null, null]);
  });

  it("answers each of several many-row reads in one turn all of its own rows, and none for a list that finds nothing", async () => {
    for (const id of ["m1", "m2", "n1"]) await token(`${id}-${run}`);
    const read = gatheredRowsReader(database, `test_gather_rows_${run}`, `select "t"."id" from "oauthRefreshToken" as "t" where "t"."token" like $1 and "t"."clientId" = $2`, ["text", "text"]);
    const ids = (rows: Record<string, unknown>[]) => rows.map((row) => String(row.id)).sort();
    const answers = await Promise.all([read([`hash-n_-${run}`, clientId]), read([`hash-m_-${run}`, clientId]), read([`hash-m_-${run}`, `other-${run}`]), read([`hash-x_-${run}`, clientId])]);
    expect(answers.map(ids)).toEqual([[`n1-${run}`], [`m1-${run}`, `m2-${run}`], [], []]);
    // Alone, the same answer.
    expect(ids(await read([`hash-m_-${run}`, clientId]))).toEqual([`m1-${run}`, `m2-${run}`]);
  });
});
