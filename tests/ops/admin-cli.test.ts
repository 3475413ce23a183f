import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useTestServer } from "../helpers/fixtures.js";
import { authorize, fullCodeFlow, registerClient, signUp, token } from "../helpers/oauth.js";
import { cookiesOf } from "../helpers/server.js";

const server = useTestServer();
const ROOT = join(import.meta.dirname, "..", "..");

/** `npm run admin -- ...args` as a child process, on the test server's database (and Redis). */
function admin(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const { database, redisUrl, secret } = server.config;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: "test",
    DATABASE_URL: database.kind === "postgres" ? database.url : database.file,
    BETTER_AUTH_SECRET: secret,
    AUTH_URL: server.url,
    LOG_LEVEL: "warn",
    ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
  };
  return new Promise((resolve) => {
    execFile(process.execPath, ["--import", "tsx", "scripts/admin.ts", ...args], { cwd: ROOT, env }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

async function adminJson(...args: string[]) {
  const res = await admin(...args, "--json");
  expect(res.code, res.stderr).toBe(0);
  return JSON.parse(res.stdout);
}

const sessionOf = async (cookie: string) => (await server.api("/api/auth/get-session", { cookie })).json;

async function adminActions(command: string) {
  const rows = await server.db.selectFrom("auditEvent").select(["detail"]).where("event", "=", "admin.action").execute();
  return rows.map((r) => JSON.parse(r.detail as string)).filter((d) => d.command === command);
}

describe("admin CLI: clients", () => {
  it("disable makes the token endpoint refuse the client; enable lets it back in", async () => {
    const { client, tokens } = await fullCodeFlow(server);
    const listed = await adminJson("clients", "list");
    expect(listed.find((c: { clientId: string }) => c.clientId === client.client_id)).toMatchObject({ disabled: false });

    const disabled = await admin("clients", "disable", client.client_id);
    expect(disabled.code, disabled.stderr).toBe(0);
    expect(disabled.stdout).toContain(`client ${client.client_id} disabled`);
    const refused = await token(server, { grant_type: "refresh_token", refresh_token: tokens.json.refresh_token, client_id: client.client_id });
    // RFC 6749 §5.2: invalid_client; 401 only for a client that authenticated with a header (this one is public).
    expect(refused.json.error, refused.text).toBe("invalid_client");
    expect(refused.status).toBe(400);

    const enabled = await admin("clients", "enable", client.client_id);
    expect(enabled.code, enabled.stderr).toBe(0);
    const again = await token(server, { grant_type: "refresh_token", refresh_token: tokens.json.refresh_token, client_id: client.client_id });
    expect(again.status).toBe(200);
    expect((await adminActions("clients disable")).length).toBeGreaterThan(0);
  });

  it("resources sets a client's RFC 8707 allow-list, which authorize then enforces; --all clears it", async () => {
    const person = await signUp(server);
    const client = await registerClient(server);
    const api = `https://api-${Date.now().toString(36)}.example/v1`;
    const set = await adminJson("clients", "resources", client.client_id, api);
    expect(set).toEqual({ clientId: client.client_id, resources: [api] });
    const other = await authorize(server, { clientId: client.client_id, cookie: person.cookie, extra: { resource: "https://other.example/" } });
    expect(other.url.searchParams.get("error")).toBe("invalid_target");
    const listed = await authorize(server, { clientId: client.client_id, cookie: person.cookie, extra: { resource: api } });
    expect(listed.code).toBeTruthy();
    expect(await adminJson("clients", "resources", client.client_id, "--all")).toEqual({ clientId: client.client_id, resources: "any" });
    const open = await authorize(server, { clientId: client.client_id, cookie: person.cookie, extra: { resource: "https://other.example/" } });
    expect(open.code).toBeTruthy();
    const bad = await admin("clients", "resources", client.client_id, "HTTPS://API.example:443/v1");
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("https://api.example/v1");
  });

  it("an unknown client id exits 1 with a message", async () => {
    const res = await admin("clients", "disable", "no-such-client");
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('no client with id "no-such-client"');
  });
});

describe("admin CLI: keys", () => {
  it("rotate adds a signing key that the running server's JWKS publishes beside the old one", async () => {
    const before = (await server.api("/api/auth/jwks")).json.keys as { kid: string }[];
    expect(before.length).toBeGreaterThan(0);
    const rotated = await adminJson("keys", "rotate");
    expect(typeof rotated.kid).toBe("string");
    // The server reads keys made by another process within its cache interval (lib/jwks-cache.ts),
    // or, told through Redis, within about a second: poll.
    const started = Date.now();
    const deadline = started + 45_000;
    let keys = before;
    while (!keys.some((k) => k.kid === rotated.kid) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 500));
      keys = (await server.api("/api/auth/jwks")).json.keys;
    }
    expect(keys.map((k) => k.kid)).toEqual(expect.arrayContaining([...before.map((k) => k.kid), rotated.kid]));
    expect(keys).toHaveLength(before.length + 1);
    if (server.config.redisUrl) expect(Date.now() - started).toBeLessThan(5_000);
    const rows = await server.db.selectFrom("auditEvent").select("detail").where("event", "=", "signing_key.rotated").execute();
    expect(rows.map((r) => JSON.parse(r.detail as string).kid)).toContain(rotated.kid);
  }, 90_000);
});

describe("admin CLI: users and sessions", () => {
  it("ban ends the user's sessions and refuses sign-in; unban lets them in again", async () => {
    const person = await signUp(server);
    expect((await sessionOf(person.cookie))?.user?.id).toBe(person.user.id);
    const banned = await admin("users", "ban", person.email, "--reason", "abuse");
    expect(banned.code, banned.stderr).toBe(0);
    expect(banned.stdout).toContain("banned");

    expect(await sessionOf(person.cookie)).toBeNull();
    const refused = await server.api("/api/auth/sign-in/email", { body: { email: person.email, password: person.password } });
    expect(refused.status).toBe(403);
    expect(cookiesOf(refused.headers)).not.toContain("session_token=");
    const row = await server.db.selectFrom("user").select(["banned", "banReason"]).where("id", "=", person.user.id).executeTakeFirstOrThrow();
    expect(Boolean(row.banned)).toBe(true);
    expect(row.banReason).toBe("abuse");

    expect((await admin("users", "unban", person.user.id)).code).toBe(0);
    expect((await server.api("/api/auth/sign-in/email", { body: { email: person.email, password: person.password } })).status).toBe(200);
  });

  it("sessions list shows each session; revoke ends one by id, then all", async () => {
    const person = await signUp(server);
    const second = cookiesOf((await server.api("/api/auth/sign-in/email", { body: { email: person.email, password: person.password } })).headers);
    const sessions = (await adminJson("sessions", "list", person.email)) as { id: string; createdAt: string }[];
    expect(sessions).toHaveLength(2);
    expect(JSON.stringify(sessions)).not.toContain(person.token);

    // The oldest is the sign-up's.
    expect((await admin("sessions", "revoke", person.email, sessions[0]!.id)).code).toBe(0);
    expect(await sessionOf(person.cookie)).toBeNull();
    expect((await sessionOf(second))?.user?.id).toBe(person.user.id);
    expect(await adminJson("sessions", "list", person.user.id)).toHaveLength(1);

    expect((await admin("sessions", "revoke", person.email, "--all")).code).toBe(0);
    expect(await sessionOf(second)).toBeNull();
    expect((await admin("sessions", "list", person.email)).stdout).toContain("has no sessions");
  });

  it("refuses ambiguous or unknown input with exit code 1", async () => {
    const person = await signUp(server);
    for (const args of [["sessions", "revoke", person.email], ["sessions", "revoke", person.email, "x", "--all"], ["users", "ban", "nobody@example.invalid"], ["sessions", "list"]]) {
      const res = await admin(...args);
      expect(res.code, args.join(" ")).toBe(1);
      expect(res.stderr).toMatch(/^admin: /);
    }
  });
});

describe("admin CLI: openapi and usage", () => {
  it("openapi export writes the OpenAPI 3.1.1 document as JSON", async () => {
    const dir = mkdtempSync(join(tmpdir(), "idp-openapi-"));
    try {
      const file = join(dir, "openapi.json");
      const res = await admin("openapi", "export", file);
      expect(res.code, res.stderr).toBe(0);
      const doc = JSON.parse(readFileSync(file, "utf8"));
      expect(doc.openapi).toBe("3.1.1");
      expect(Object.keys(doc.paths)).toContain("/api/admin/audit-log");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("an unknown command exits 1 with the usage", async () => {
    const res = await admin("frobnicate", "everything");
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('unknown command "frobnicate everything"');
    expect(res.stderr).toContain("usage:");
  });
});
