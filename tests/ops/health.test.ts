import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { createDb } from "../../lib/db/connection.js";
import { applyMigrations } from "../../lib/migrate.js";
import { createReadiness } from "../../lib/readiness.js";
import { readinessRoutes } from "../../routes/ops/health.js";
import { withDeps } from "../../routes/middleware.js";
import { useTestServer } from "../helpers/fixtures.js";

const server = useTestServer();
const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

describe("/healthz and /readyz", () => {
  it("answer a running server: alive, and ready with every check ok", async () => {
    const live = await server.api("/healthz");
    expect(live.status).toBe(200);
    expect(live.json).toEqual({ status: "ok" });
    expect(live.headers.get("cache-control")).toBe("no-store");

    const ready = await server.api("/readyz");
    expect(ready.status).toBe(200);
    expect(ready.json).toEqual({ status: "ready", checks: { database: "ok", migrations: "ok", redis: process.env.TEST_REDIS_URL ? "ok" : "not configured" } });
    expect(ready.headers.get("cache-control")).toBe("no-store");
  });

  it("renders a failing check as a 503 problem that names it", async () => {
    const app = withDeps(readinessRoutes, {
      auth: undefined as never,
      readiness: async () => ({ ready: false, checks: { database: "ok", redis: "failing: connect ECONNREFUSED", migrations: "ok" } }),
    });
    const res = await app.request("/");
    expect(res.status).toBe(503);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    expect(res.headers.get("retry-after")).toBe("5");
    const body = await res.json();
    expect(body).toMatchObject({ status: 503, code: "NOT_READY", title: "Service Unavailable", checks: { redis: "failing: connect ECONNREFUSED" } });
    expect(body.detail).toContain("redis failing: connect ECONNREFUSED");
  });
});

describe("readiness checks against real dependencies", () => {
  it("is not ready while migrations are pending, and ready once applied", async () => {
    const dir = mkdtempSync(join(tmpdir(), "readyz-"));
    dirs.push(dir);
    const database = createDb({ kind: "sqlite", file: join(dir, "db.sqlite") });
    try {
      const before = await createReadiness({ database, migrationsEveryMs: 0 })();
      expect(before.ready).toBe(false);
      expect(before.checks.database).toBe("ok");
      expect(before.checks.migrations).toMatch(/^pending: 0001_initial/);
      await applyMigrations(database);
      expect(await createReadiness({ database, migrationsEveryMs: 0 })()).toEqual({ ready: true, checks: { database: "ok", redis: "not configured", migrations: "ok" } });
    } finally {
      await database.close();
    }
  });

  it("is not ready when Redis does not answer or the database is gone", async () => {
    const dir = mkdtempSync(join(tmpdir(), "readyz-"));
    dirs.push(dir);
    const database = createDb({ kind: "sqlite", file: join(dir, "db.sqlite") });
    await applyMigrations(database);
    // Nothing listens on port 1: every PING fails fast.
    const redis = new Redis("redis://127.0.0.1:1", { maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null, lazyConnect: true });
    try {
      const report = await createReadiness({ database, redis })();
      expect(report.ready).toBe(false);
      expect(report.checks.database).toBe("ok");
      expect(report.checks.redis).toMatch(/^failing: /);
    } finally {
      redis.disconnect();
    }
    await database.close();
    const closed = await createReadiness({ database, migrationsEveryMs: 0 })();
    expect(closed.ready).toBe(false);
    expect(closed.checks.database).toMatch(/^failing: /);
  });
});
