import { randomBytes, randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AUDIT_RETENTION_JOB } from "../../plugins/audit/retention.js";
import { findLease, takeLease } from "../../plugins/job-lease/store.js";
import { useTempDirs } from "../helpers/fixtures.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { until } from "../helpers/stripe.js";

/**
 * The audit log is kept AUDIT_LOG_RETENTION_DAYS (here 30): older events are deleted in
 * batches, and of several instances on one database only the holder of the pruning lease
 * deletes. Two instances share a database (TEST_DATABASE_URL, or one SQLite file); what each
 * did is read from its own log.
 */

const DAY = 24 * 60 * 60 * 1000;
const tempDir = useTempDirs("audit-retention-");

interface Instance {
  server: TestServer;
  lines: Record<string, any>[];
}

async function startInstance(databaseUrl: string): Promise<Instance> {
  const lines: Record<string, any>[] = [];
  const server = await startTestServer(
    { DATABASE_URL: databaseUrl, AUDIT_LOG_RETENTION_DAYS: "30", LOG_LEVEL: "debug" },
    { logDestination: { write: (line: string) => void lines.push(JSON.parse(line)) }, auditRetention: { everyMs: 100, leaseMs: 30_000, batchSize: 50 } },
  );
  return { server, lines };
}

const pruned = (instance: Instance) => instance.lines.filter((l) => l.msg === "audit log pruned");
const skipped = (instance: Instance) => instance.lines.filter((l) => l.msg === "audit log pruning skipped: another instance holds the lease");

/** `count` audit events of this test, `daysAgo` old; their request id names the batch. */
async function insertEvents(server: TestServer, count: number, daysAgo: number) {
  const requestId = `retention-${randomBytes(6).toString("hex")}`;
  const at = new Date(Date.now() - daysAgo * DAY);
  await server.db
    .insertInto("auditEvent")
    .values(Array.from({ length: count }, () => ({ id: randomUUID(), at, event: "admin.action", requestId, detail: '{"command":"retention test"}' })))
    .execute();
  return requestId;
}

const remaining = async (server: TestServer, requestId: string) =>
  Number((await server.db.selectFrom("auditEvent").select((eb) => eb.fn.countAll().as("n")).where("requestId", "=", requestId).executeTakeFirstOrThrow()).n);

describe("audit log retention (AUDIT_LOG_RETENTION_DAYS)", () => {
  const instances: Instance[] = [];
  beforeAll(async () => {
    const databaseUrl = process.env.TEST_DATABASE_URL || join(tempDir(), "shared.sqlite");
    // The first instance makes the schema; a lease left by an earlier run that crashed goes.
    const first = await startInstance(databaseUrl);
    await first.server.db.deleteFrom("jobLease").where("id", "=", AUDIT_RETENTION_JOB).execute();
    instances.push(first);
    instances.push(await startInstance(databaseUrl));
    // Both run their rounds every 100 ms: one of them holds the lease, the other skips.
    await until("one instance holds the lease", async () => (await findLease(first.server.db, AUDIT_RETENTION_JOB)) && instances.some((i) => skipped(i).length > 0));
  });
  afterAll(async () => {
    for (const instance of instances) await instance.server.close();
  });

  it("deletes events older than the retention in batches, keeps the newer ones, and only one instance deletes", async () => {
    const [a, b] = instances as [Instance, Instance];
    const old = await insertEvents(a.server, 120, 31);
    const recent = await insertEvents(a.server, 10, 29);
    await until("the old events are gone", async () => (await remaining(a.server, old)) === 0);
    expect(await remaining(b.server, recent)).toBe(10);

    // Exactly one instance pruned, the one whose name the lease holds, in batches of 50; the
    // other tried at every round meanwhile and was turned away.
    const [pruner, other] = pruned(a).length ? [a, b] : [b, a];
    expect(pruned(other)).toEqual([]);
    expect(skipped(other).length).toBeGreaterThan(0);
    const lines = pruned(pruner);
    expect(lines.reduce((sum, l) => sum + l.deleted, 0)).toBe(120);
    expect(Math.max(...lines.map((l) => l.batches))).toBeGreaterThanOrEqual(3);
    expect((await findLease(a.server.db, AUDIT_RETENTION_JOB))?.holder).toBe(lines[0]!.holder);
  });

  it("hands over: when the pruning instance stops, the other takes the lease and prunes", async () => {
    const [a, b] = instances as [Instance, Instance];
    const [pruner, other] = pruned(a).length ? [a, b] : [b, a];
    const holder = pruned(pruner)[0]!.holder;
    await pruner.server.close();
    instances.splice(instances.indexOf(pruner), 1);
    const old = await insertEvents(other.server, 30, 400);
    await until("the other instance prunes", async () => (await remaining(other.server, old)) === 0);
    expect(pruned(other).reduce((sum, l) => sum + l.deleted, 0)).toBe(30);
    const lease = await findLease(other.server.db, AUDIT_RETENTION_JOB);
    expect(lease?.holder).not.toBe(holder);
    expect(lease?.holder).toBe(pruned(other)[0]!.holder);
  });

  it("gives a lease to exactly one of many instances asking at once, and to another only once it expired", async () => {
    const db = instances[0]!.server.db;
    const job = `test-job-${randomBytes(4).toString("hex")}`;
    const holders = Array.from({ length: 20 }, (_, i) => `instance-${i}`);
    const taken = await Promise.all(holders.map((holder) => takeLease(db, job, holder, 60_000)));
    expect(taken.filter(Boolean)).toHaveLength(1);
    const winner = holders[taken.indexOf(true)]!;
    // The holder renews it; nobody else gets it while it runs.
    expect(await takeLease(db, job, winner, 60_000)).toBe(true);
    expect(await takeLease(db, job, "latecomer", 60_000)).toBe(false);
    // Expired (a holder that died): the next to ask takes it.
    await db.updateTable("jobLease").set({ expiresAt: new Date(Date.now() - 1000) }).where("id", "=", job).execute();
    expect(await takeLease(db, job, "latecomer", 60_000)).toBe(true);
    expect(await takeLease(db, job, winner, 60_000)).toBe(false);
    await db.deleteFrom("jobLease").where("id", "=", job).execute();
  });
});
