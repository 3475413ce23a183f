import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { connect } from "node:net";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newIdentity, registerIdentity } from "../helpers/bap.js";
import { useTempDirs } from "../helpers/fixtures.js";
import { authorize, pkce, REDIRECT, registerClient, signUp } from "../helpers/oauth.js";
import { apiClient, freePort, postForm, type TestServer } from "../helpers/server.js";
import { missingBinaries, startThrowawayPostgres, type ThrowawayPostgres } from "../helpers/throwaway.js";

/**
 * Faults hit while work is in flight, against real server processes (`npm start`: node --import
 * tsx server.ts): PostgreSQL restarted under load on two instances, SIGTERM with a request in
 * flight, SIGKILL in the middle of a backup write. The PostgreSQL restarted here is a throwaway
 * cluster of the test's own (tests/helpers/throwaway.ts), never the machine's shared one.
 */
const tempDir = useTempDirs("idp-faults-");
if (missingBinaries) console.warn(`tests/ops/faults.test.ts: PostgreSQL fault tests skipped: ${missingBinaries}`);

/** A server process as `npm start` runs it, on a free port; its log (stderr) is kept. */
interface ServerProcess {
  url: string;
  child: ChildProcess;
  log(): string;
  exited: Promise<number | null>;
  /** The test-server shape the helpers (sign-up, OAuth) take. */
  client: TestServer;
}

async function spawnServer(env: Record<string, string>): Promise<ServerProcess> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const dir = tempDir();
  const child = spawn(process.execPath, ["--import", "tsx", "server.ts"], {
    cwd: process.cwd(),
    env: {
      PATH: process.env.PATH,
      NODE_ENV: "test",
      PORT: String(port),
      HOST: "127.0.0.1",
      AUTH_URL: url,
      DATA_DIR: dir,
      DATABASE_URL: join(dir, "idp.sqlite"),
      BETTER_AUTH_SECRET: "fault-secret-fault-secret-fault-secret-0123",
      LOG_LEVEL: "info",
      AUTO_MIGRATE: "true",
      RATE_LIMIT_ENABLED: "false",
      MAIL_DISABLED: "true",
      ...env,
    },
  });
  let log = "";
  child.stderr!.on("data", (chunk: Buffer) => (log += chunk.toString("utf8")));
  child.stdout!.on("data", (chunk: Buffer) => (log += chunk.toString("utf8")));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  for (let i = 0; i < 600 && !log.includes('"listening"'); i++) {
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  if (!log.includes('"listening"')) {
    child.kill("SIGKILL");
    throw new Error(`server did not start:\n${log}`);
  }
  const client = { url, api: apiClient(url), dbType: "postgres" } as unknown as TestServer;
  return { url, child, log: () => log, exited, client };
}

async function stopServer(server: ServerProcess | undefined) {
  if (!server || server.child.exitCode !== null) return;
  server.child.kill("SIGKILL");
  await server.exited;
}

const ciphertext = () => randomBytes(48).toString("base64");

/** A signed-up person with a registered BAP identity (its backups are written with the session cookie). */
async function personWithIdentity(server: TestServer) {
  const person = await signUp(server);
  const id = newIdentity();
  const res = await registerIdentity(server, person.cookie, id);
  if (res.status !== 201) throw new Error(`identity not registered: ${res.status} ${res.text}`);
  return { ...person, id };
}

/** A refresh token for `person` from a public client: authorization code + PKCE with offline_access. */
async function refreshTokenFor(server: TestServer, clientId: string, cookie: string): Promise<string> {
  const { verifier, challenge } = pkce();
  const auth = await authorize(server, { clientId, cookie, challenge, scope: "openid offline_access" });
  const res = await postForm(server, "/api/auth/oauth2/token", { grant_type: "authorization_code", code: auth.code!, redirect_uri: REDIRECT, client_id: clientId, code_verifier: verifier });
  if (res.status !== 200 || !res.json.refresh_token) throw new Error(`no refresh token: ${res.status} ${res.text}`);
  return res.json.refresh_token as string;
}

async function createDatabase(cluster: ThrowawayPostgres, name: string) {
  const admin = new pg.Client({ connectionString: cluster.url() });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return cluster.url(name);
}

/** Every answer the load got: status, time taken, and the body of anything but a 200. */
interface Outcome {
  kind: "backup" | "refresh";
  status: number | "network error";
  ms: number;
  at: number;
  body?: unknown;
  contentType?: string | null;
}

describe.skipIf(Boolean(missingBinaries))("PostgreSQL (a throwaway cluster) under two server processes", () => {
  let cluster: ThrowawayPostgres;
  let databaseUrl: string;
  const servers: ServerProcess[] = [];

  beforeAll(async () => {
    cluster = await startThrowawayPostgres();
    databaseUrl = await createDatabase(cluster, "restart_load");
    // One at a time: the first applies the migrations (AUTO_MIGRATE), the second finds them done.
    servers.push(await spawnServer({ DATABASE_URL: databaseUrl }));
    servers.push(await spawnServer({ DATABASE_URL: databaseUrl }));
  }, 120_000);

  afterAll(async () => {
    for (const server of servers) await stopServer(server);
    await cluster?.destroy();
  });

  it("restarted under load: answers 503 (problem / temporarily_unavailable) while it is down, never a 500 or a hang, recovers by itself, and loses nothing acknowledged", async () => {
    const [a, b] = servers as [ServerProcess, ServerProcess];
    const clientId = (await registerClient(a.client)).client_id;
    const people = await Promise.all([0, 1, 2, 3].map(() => personWithIdentity(a.client)));
    const refresh = await Promise.all(people.map((p) => refreshTokenFor(a.client, clientId, p.cookie)));

    const outcomes: Outcome[] = [];
    const acked = people.map(() => [] as { backup: string; generation: number }[]);
    const attempted = people.map(() => [] as string[]);
    const rotations = people.map(() => 0);
    const t0 = Date.now();
    let stopLoad = false;

    async function timed(kind: Outcome["kind"], send: () => Promise<Response>) {
      const started = Date.now();
      try {
        const res = await send();
        const text = await res.text();
        const outcome: Outcome = { kind, status: res.status, ms: Date.now() - started, at: started - t0, contentType: res.headers.get("content-type") };
        if (res.status !== 200) outcome.body = text ? JSON.parse(text) : null;
        outcomes.push(outcome);
        return { status: res.status, json: res.status === 200 ? JSON.parse(text) : null };
      } catch (err) {
        outcomes.push({ kind, status: "network error", ms: Date.now() - started, at: started - t0, body: String(err) });
        return { status: 0, json: null };
      }
    }

    // Each person writes backups and rotates its refresh token in a loop, alternating instances.
    const backupLoop = async (i: number) => {
      for (let n = 0; !stopLoad; n++) {
        const server = n % 2 ? b : a;
        const backup = ciphertext();
        attempted[i]!.push(backup);
        const res = await timed("backup", () =>
          fetch(`${server.url}/api/backup`, {
            method: "POST",
            headers: { origin: server.url, cookie: people[i]!.cookie, "content-type": "application/json" },
            body: JSON.stringify({ encryptedBackup: backup }),
            signal: AbortSignal.timeout(15_000),
          }),
        );
        if (res.status === 200) acked[i]!.push({ backup, generation: res.json.generation });
        else await new Promise((r) => setTimeout(r, 50));
      }
    };
    const refreshLoop = async (i: number) => {
      for (let n = 0; !stopLoad; n++) {
        const server = n % 2 ? a : b;
        const res = await timed("refresh", () =>
          fetch(`${server.url}/api/auth/oauth2/token`, {
            method: "POST",
            headers: { "content-type": "application/x-www-form-urlencoded" },
            body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: refresh[i]!, client_id: clientId }).toString(),
            signal: AbortSignal.timeout(15_000),
          }),
        );
        if (res.status === 200) {
          refresh[i] = res.json.refresh_token;
          rotations[i]! += 1;
        } else if (res.status === 503) {
          // The rotation is one transaction (lib/atomic-refresh.ts): a 503 left the old token
          // valid, and the retry of that same token must rotate it, never look like reuse.
          await new Promise((r) => setTimeout(r, 50));
        } else {
          // Any other answer (a 400 invalid_grant would mean the grant was lost) fails below.
          return;
        }
      }
    };
    const load = Promise.all(people.flatMap((_, i) => [backupLoop(i), refreshLoop(i)]));

    // Load in flight (every loop has been answered at least once), then the database goes away
    // for ~2 s and comes back.
    const warm = () => acked.every((w) => w.length > 0) && rotations.every((r) => r > 0);
    for (let i = 0; i < 300 && !warm(); i++) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 500));
    const ackedBefore = acked.flat().length;
    const rotationsBefore = rotations.reduce((x, y) => x + y, 0);
    const downAt = Date.now() - t0;
    await cluster.stop();
    await new Promise((r) => setTimeout(r, 2000));
    await cluster.start();
    const upAt = Date.now() - t0;
    // Recovery by itself: the load keeps going until both instances have served writes again.
    const recovered = () => outcomes.filter((o) => o.at > upAt + 200 && o.status === 200).length;
    for (let i = 0; i < 200 && recovered() < 20; i++) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 500));
    stopLoad = true;
    await load;

    const unexpected = outcomes.filter((o) => o.status !== 200 && o.status !== 503);
    const logs = servers.map((s) => `exit ${s.child.exitCode}:\n${s.log().slice(-3000)}`).join("\n");
    expect(unexpected, `${JSON.stringify(unexpected.slice(0, 5))}\n${logs}`).toEqual([]);
    // The fault was hit with work in flight, and answered as documented.
    const unavailable = outcomes.filter((o) => o.status === 503);
    expect(unavailable.filter((o) => o.kind === "backup").length).toBeGreaterThan(0);
    expect(unavailable.filter((o) => o.kind === "refresh").length).toBeGreaterThan(0);
    for (const o of unavailable) {
      if (o.kind === "backup") {
        expect(o.contentType).toContain("application/problem+json");
        expect(o.body).toMatchObject({ status: 503, code: "TEMPORARILY_UNAVAILABLE" });
      } else {
        expect(o.contentType).toContain("application/json");
        expect(o.body).toMatchObject({ error: "temporarily_unavailable", error_description: expect.any(String) });
      }
    }
    // Fast: no request waited on the dead database (the pool's connect deadline is 5 s).
    expect(Math.max(...outcomes.map((o) => o.ms))).toBeLessThan(6000);
    expect(unavailable.every((o) => o.at >= downAt - 1000)).toBe(true);
    expect(ackedBefore).toBeGreaterThan(0);
    expect(rotationsBefore).toBeGreaterThan(0);
    expect(recovered()).toBeGreaterThanOrEqual(20);

    // Both processes are still serving, and nothing went unhandled in them.
    for (const server of servers) {
      expect(server.child.exitCode).toBeNull();
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
      expect(server.log()).not.toMatch(/unhandled|uncaught|"level":"fatal"/i);
    }

    // Nothing acknowledged was lost: each person's stored backup is the last acknowledged one (or a
    // later write whose answer was lost), with a generation at least the last acknowledged.
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    try {
      for (const [i, person] of people.entries()) {
        const mine = acked[i]!;
        expect(mine.length).toBeGreaterThan(0);
        const generations = mine.map((w) => w.generation);
        expect(new Set(generations).size).toBe(generations.length);
        const last = mine.at(-1)!;
        const { rows } = await db.query(`SELECT backup, generation FROM "bapBackup" WHERE "bapId" = $1`, [person.id.bapId]);
        expect(rows).toHaveLength(1);
        expect(Number(rows[0].generation)).toBeGreaterThanOrEqual(last.generation);
        const after = attempted[i]!.slice(attempted[i]!.indexOf(last.backup));
        expect(after).toContain(rows[0].backup);
      }
    } finally {
      await db.end();
    }
    // No refresh grant was lost to the outage: every acknowledged rotation was stored, and no
    // rotation cut by it spent the old token, so the last refresh token each person got rotates.
    for (const [i] of people.entries()) {
      expect(rotations[i]).toBeGreaterThan(0);
      const res = await postForm(b.client, "/api/auth/oauth2/token", { grant_type: "refresh_token", refresh_token: refresh[i]!, client_id: clientId });
      expect(res.status, res.text).toBe(200);
    }
  }, 90_000);

  it("a crash (SIGKILL) while a backup row is written but not committed leaves the previous backup exactly as it was, and readable", async () => {
    const [a, b] = servers as [ServerProcess, ServerProcess];
    const db = new pg.Client({ connectionString: databaseUrl });
    const lock = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    await lock.connect();
    try {
      const { person, first } = await personWithBackup(a);
      const before = (await db.query(`SELECT * FROM "bapBackup" WHERE "bapId" = $1`, [person.id.bapId])).rows[0];

      // The write stops half-way, deterministically, with no hook in the server: a trigger of
      // this test's database runs after the row is updated, inside the server's transaction,
      // and waits for an advisory lock this test holds.
      await db.query(`CREATE FUNCTION wait_for_test() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_advisory_xact_lock(4242); RETURN NEW; END $$`);
      await db.query(`CREATE TRIGGER hold_backup_write AFTER UPDATE ON "bapBackup" FOR EACH ROW EXECUTE FUNCTION wait_for_test()`);
      await lock.query("SELECT pg_advisory_lock(4242)");

      const outcome = backgroundWrite(a, person.cookie, ciphertext());
      const waiting = async () =>
        (await db.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND wait_event = 'advisory' AND query ILIKE '%bapBackup%'`)).rows[0].n;
      for (let i = 0; i < 200 && (await waiting()) === 0; i++) await new Promise((r) => setTimeout(r, 25));
      expect(await waiting()).toBe(1);

      // The process dies with the write in flight.
      a.child.kill("SIGKILL");
      expect(await a.exited).toBeNull();
      expect(await outcome).toBe("no answer");
      await lock.query("SELECT pg_advisory_unlock(4242)");
      // PostgreSQL ends the orphaned transaction (its client is gone) and rolls it back.
      for (let i = 0; i < 200 && (await waiting()) > 0; i++) await new Promise((r) => setTimeout(r, 25));
      await db.query(`DROP TRIGGER hold_backup_write ON "bapBackup"`);

      const after = (await db.query(`SELECT * FROM "bapBackup" WHERE "bapId" = $1`, [person.id.bapId])).rows[0];
      expect(after).toEqual(before);
      expect(after.backup).toBe(first);
      // The other instance reads it back through the API.
      const read = await b.client.api("/api/backup", { cookie: person.cookie });
      expect(read.status).toBe(200);
      expect(read.json).toMatchObject({ bapId: person.id.bapId, backup: first, generation: 1 });
    } finally {
      await lock.end();
      await db.end();
    }
  }, 60_000);
});

/** Where the suite's own database is (SQLite in a fresh file, or TEST_DATABASE_URL), and Redis when the pass has one. */
function suiteStorage(): Record<string, string> {
  return {
    ...(process.env.TEST_DATABASE_URL ? { DATABASE_URL: process.env.TEST_DATABASE_URL } : {}),
    ...(process.env.TEST_REDIS_URL ? { REDIS_URL: process.env.TEST_REDIS_URL } : {}),
  };
}

describe("SIGTERM", () => {
  it("stops accepting, lets the request in flight finish, closes the pools and exits 0", async () => {
    const server = await spawnServer(suiteStorage());
    try {
      const { port } = new URL(server.url);
      // A sign-up whose body is still arriving when the signal comes: in flight in the server.
      const body = JSON.stringify({ name: "Drained", email: `drain-${process.pid}-${Date.now()}@example.com`, password: "correct horse battery staple" });
      const socket = connect(Number(port), "127.0.0.1");
      await new Promise((resolve) => socket.once("connect", resolve));
      let answer = "";
      socket.on("data", (chunk: Buffer) => (answer += chunk.toString("utf8")));
      const ended = new Promise((resolve) => socket.once("close", resolve));
      socket.write(
        `POST /api/auth/sign-up/email HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nOrigin: ${server.url}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n` +
          body.slice(0, 10),
      );
      await new Promise((r) => setTimeout(r, 300));

      const signalled = Date.now();
      server.child.kill("SIGTERM");
      for (let i = 0; i < 100 && !server.log().includes("stopping"); i++) await new Promise((r) => setTimeout(r, 20));
      expect(server.log()).toContain("stopping: draining requests");
      // No new connections.
      const refused = await fetch(`${server.url}/healthz`).then(
        () => null,
        (err: Error & { cause?: { code?: string } }) => err.cause?.code,
      );
      expect(refused).toBe("ECONNREFUSED");
      expect(server.child.exitCode).toBeNull();

      // The request in flight completes, and its connection is closed after the answer.
      socket.write(body.slice(10));
      await ended;
      expect(answer, server.log().slice(-1500)).toMatch(/^HTTP\/1\.1 200 /);
      expect(answer.toLowerCase()).toContain("connection: close");
      expect(answer).toContain('"token"');

      const code = await server.exited;
      expect(code).toBe(0);
      expect(Date.now() - signalled).toBeLessThan(10_000);
      expect(server.log()).not.toMatch(/unhandled|stop failed/i);
    } finally {
      await stopServer(server);
    }
  }, 60_000);
});

/** A person with an identity and a first backup, written through `server`. */
async function personWithBackup(server: ServerProcess) {
  const person = await personWithIdentity(server.client);
  const first = ciphertext();
  const res = await server.client.api("/api/backup", { cookie: person.cookie, body: { encryptedBackup: first } });
  expect(res.status).toBe(200);
  expect(res.json.generation).toBe(1);
  return { person, first };
}

/** POST /api/backup in the background: its outcome once the server is killed (a network error). */
function backgroundWrite(server: ServerProcess, cookie: string, backup: string) {
  return fetch(`${server.url}/api/backup`, {
    method: "POST",
    headers: { origin: server.url, cookie, "content-type": "application/json" },
    body: JSON.stringify({ encryptedBackup: backup }),
  }).then(
    (res) => `answered ${res.status}`,
    () => "no answer",
  );
}

describe("a crash during a backup write (SQLite)", () => {
  it("SIGKILL while the write waits for the database lock leaves the previous backup exactly as it was", async () => {
    const dir = tempDir();
    const file = join(dir, "crash.sqlite");
    const server = await spawnServer({ DATABASE_URL: file, DATA_DIR: dir });
    const { default: SQLite } = await import("better-sqlite3");
    const db = new SQLite(file);
    try {
      server.client = { ...server.client, dbType: "sqlite" } as TestServer;
      const { person, first } = await personWithBackup(server);
      const read = () => db.prepare(`SELECT * FROM "bapBackup" WHERE "bapId" = ?`).get(person.id.bapId);
      const before = read();

      // Another connection holds the write lock: the server's write waits in SQLite's busy
      // handler (busy_timeout, 5 s), which blocks its event loop, so /healthz stops answering.
      db.exec("BEGIN IMMEDIATE");
      const outcome = backgroundWrite(server, person.cookie, ciphertext());
      const stalled = async () => {
        try {
          await fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(400) });
          return false;
        } catch {
          return true;
        }
      };
      let blocked = false;
      for (let i = 0; i < 40 && !blocked; i++) blocked = await stalled();
      expect(blocked).toBe(true);

      server.child.kill("SIGKILL");
      expect(await server.exited).toBeNull();
      expect(await outcome).toBe("no answer");
      db.exec("ROLLBACK");

      // The file is whole and holds the previous backup, byte for byte.
      expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
      expect(read()).toEqual(before);
      expect((read() as { backup: string }).backup).toBe(first);
    } finally {
      db.close();
      await stopServer(server);
    }
  }, 60_000);
});
