import { randomBytes, randomUUID } from "node:crypto";
import { PrivateKey } from "@bsv/sdk";
import { checkBackupStatus, pullBackup, pushBackup } from "@sigma-auth/better-auth-plugin/client/sync";
import { getAuthToken } from "bitcoin-auth";
import { BAP, bapIdFromPubkey } from "bsv-bap";
import { beforeAll, describe, expect, it } from "vitest";
import { loadEnv } from "../../lib/env.js";
import { useTestServer } from "../helpers/fixtures.js";
import { authorize, authorizeUrl, pkce, REDIRECT, registerClient, signUp, token } from "../helpers/oauth.js";
import { recordIdentity } from "../helpers/bap.js";
import { uniqueClientIp } from "../helpers/server.js";

/**
 * Encrypted backups (spec, "Backup", per-route authentication table, Errors 6 and 7, Limits),
 * driven over HTTP against a real server on SQLite or PostgreSQL.
 */
const MAX = 128 * 1024; // BACKUP_MAX_BYTES for this server: small, so the 413 tests stay fast
const SYNC = "/api/backup/sync";
const server = useTestServer({ BACKUP_MAX_BYTES: String(MAX) });
let clientId: string;

beforeAll(async () => {
  clientId = (await registerClient(server)).client_id;
});

type Person = Awaited<ReturnType<typeof signUp>>;
interface Identity {
  key: PrivateKey;
  pubkey: string;
  bapId: string;
}

const ciphertext = (bytes = 96) => randomBytes(bytes).toString("base64");

/** A fresh BAP identity: member key from @bsv/sdk, bapId = bapIdFromPubkey(member pubkey). */
function newIdentity(): Identity {
  const key = PrivateKey.fromRandom();
  const pubkey = key.toPublicKey().toString();
  return { key, pubkey, bapId: bapIdFromPubkey(pubkey) };
}

/** Registers an identity for `userId` the way the profile routes would (the registration record). */
async function registerIdentity(userId: string, opts: { primary?: boolean; createdAt?: Date } = {}): Promise<Identity> {
  const identity = newIdentity();
  await recordIdentity(server, userId, { bapId: identity.bapId, memberPubkey: identity.pubkey, ...opts });
  return identity;
}

/** A linked provider account (what social sign-in leaves in better-auth's `account` table). */
async function linkProviderAccount(userId: string, providerId: string, accountId: string) {
  await server.db
    .insertInto("account")
    .values({ id: randomUUID(), accountId, providerId, userId, createdAt: new Date(), updatedAt: new Date() })
    .execute();
}

/** Both backup scopes: what an app that keeps the backup asks for. */
const BACKUP_APP_SCOPE = "openid profile backup:read backup:write";

/** An OAuth access token for `person` from our own server: authorization code + PKCE. */
async function accessTokenFor(person: Person, scope = BACKUP_APP_SCOPE): Promise<string> {
  const { verifier, challenge } = pkce();
  const auth = await authorize(server, { clientId, cookie: person.cookie, challenge, scope });
  const res = await token(server, { grant_type: "authorization_code", code: auth.code!, redirect_uri: REDIRECT, client_id: clientId, code_verifier: verifier });
  expect(res.status).toBe(200);
  return res.json.access_token as string;
}

/** A person with a primary identity. */
async function personWithIdentity() {
  const person = await signUp(server);
  const identity = await registerIdentity(person.user.id, { primary: true });
  return { person, identity };
}

function sign(key: PrivateKey, requestPath: string, body?: string, timestamp?: string) {
  return getAuthToken({ privateKeyWif: key.toWif(), requestPath, body, timestamp });
}

const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
const bitcoinAuth = (t: string) => ({ authorization: `Bitcoin-Auth ${t}` });

function expectProblem(res: { status: number; headers: Headers; json: any }, status: number, code?: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toContain("application/problem+json");
  expect(res.json).toMatchObject({ type: "about:blank", status, title: expect.any(String), detail: expect.any(String) });
  if (code) expect(res.json.code).toBe(code);
}

async function post(body: unknown, headers: Record<string, string>) {
  return server.api("/api/backup", { method: "POST", body, headers });
}

async function storedGeneration(bapId: string): Promise<number | null> {
  const row = await server.db.selectFrom("bapBackup").select("generation").where("bapId", "=", bapId).executeTakeFirst();
  return row ? Number(row.generation) : null;
}

/** POST /api/backup/sync with the exact bytes signed. */
async function sync(key: PrivateKey, body: Record<string, unknown>, opts: { signPath?: string; signedBody?: string; headers?: Record<string, string> } = {}) {
  const raw = JSON.stringify(body);
  const authToken = sign(key, opts.signPath ?? SYNC, opts.signedBody ?? raw);
  return server.api(SYNC, { method: "POST", body: raw, headers: { ...bitcoinAuth(authToken), ...opts.headers } });
}

describe("GET /api/backup (no selector): session", () => {
  it("returns the session user's primary backup with no-store, by cookie or session bearer token", async () => {
    const { person, identity } = await personWithIdentity();
    await registerIdentity(person.user.id); // a second, non-primary identity must not be picked
    const backup = ciphertext();
    expect((await post({ encryptedBackup: backup }, { cookie: person.cookie })).status).toBe(200);

    const res = await server.api("/api/backup", { cookie: person.cookie });
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.json).toEqual({ bapId: identity.bapId, backup, lastUpdated: expect.any(String), generation: 1 });
    expect(new Date(res.json.lastUpdated).toISOString()).toBe(res.json.lastUpdated);

    const viaBearer = await server.api("/api/backup", { headers: bearer(person.token) });
    expect(viaBearer.status).toBe(200);
    expect(viaBearer.json.backup).toBe(backup);
  });

  it("refuses without a session (401), and an OAuth access token is not a session here", async () => {
    const { person } = await personWithIdentity();
    await post({ encryptedBackup: ciphertext() }, { cookie: person.cookie });
    expectProblem(await server.api("/api/backup"), 401);
    expectProblem(await server.api("/api/backup", { headers: bearer(await accessTokenFor(person)) }), 401);
    expectProblem(await server.api("/api/backup", { headers: bearer("not-a-token") }), 401);
  });

  it("answers 404 when nothing is stored, or the account has no identity", async () => {
    const { person } = await personWithIdentity();
    expectProblem(await server.api("/api/backup", { cookie: person.cookie }), 404, "BACKUP_NOT_FOUND");
    const bare = await signUp(server);
    expectProblem(await server.api("/api/backup", { cookie: bare.cookie }), 404, "NO_BAP_IDENTITY");
  });
});

describe("GET /api/backup?bapId: owned session or Bitcoin ownership signature", () => {
  let owner: Person;
  let identity: Identity;
  let backup: string;
  const path = () => `/api/backup?bapId=${identity.bapId}`;

  beforeAll(async () => {
    ({ person: owner, identity } = await personWithIdentity());
    backup = ciphertext();
    expect((await post({ encryptedBackup: backup }, { cookie: owner.cookie })).status).toBe(200);
  });

  it("serves the owning session", async () => {
    const res = await server.api(path(), { cookie: owner.cookie });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ bapId: identity.bapId, backup, generation: 1 });
    expect(res.headers.get("cache-control")).toBe("no-store");
  });

  it("serves a token by the identity's member key over the path with its query, once", async () => {
    const authToken = sign(identity.key, path());
    const res = await server.api(path(), { headers: { "x-auth-token": authToken } });
    expect(res.status).toBe(200);
    expect(res.json.backup).toBe(backup);
    expectProblem(await server.api(path(), { headers: { "x-auth-token": authToken } }), 401, "INVALID_AUTH_TOKEN"); // replay
  });

  it("refuses another user's session (403) and no credentials (401)", async () => {
    const stranger = await signUp(server);
    expectProblem(await server.api(path(), { cookie: stranger.cookie }), 403, "IDENTITY_NOT_OWNED");
    expectProblem(await server.api(path()), 401);
  });

  it("refuses tokens by another key, for another path or query, stale, or malformed", async () => {
    const other = newIdentity();
    expectProblem(await server.api(path(), { headers: { "x-auth-token": sign(other.key, path()) } }), 403, "IDENTITY_NOT_OWNED");
    const cases: Record<string, string> = {
      "path without the query": sign(identity.key, "/api/backup"),
      "another bapId in the query": sign(identity.key, `/api/backup?bapId=${other.bapId}`),
      "sync path": sign(identity.key, SYNC),
      stale: sign(identity.key, path(), undefined, new Date(Date.now() - 6 * 60_000).toISOString()),
      garbage: "pubkey|brc77|now|/api/backup|sig",
    };
    for (const [name, authToken] of Object.entries(cases)) {
      const res = await server.api(path(), { headers: { "x-auth-token": authToken } });
      expect(res.status, name).toBe(401);
      expect(res.json.code, name).toBe("INVALID_AUTH_TOKEN");
    }
  });

  it("answers 404 for an owned identity with no backup", async () => {
    const fresh = await registerIdentity(owner.user.id);
    expectProblem(await server.api(`/api/backup?bapId=${fresh.bapId}`, { cookie: owner.cookie }), 404, "BACKUP_NOT_FOUND");
  });
});

describe("GET /api/backup?oauthId: session owning the linked provider account and the mapped identity", () => {
  it("serves the owner, refuses everyone else", async () => {
    const { person, identity } = await personWithIdentity();
    const accountId = `gh-${randomUUID()}`;
    await linkProviderAccount(person.user.id, "github", accountId);
    const backup = ciphertext();
    await post({ encryptedBackup: backup }, { cookie: person.cookie });
    const access = await accessTokenFor(person);
    expect((await server.api("/api/backup/link-oauth", { body: { provider: "github", providerAccountId: accountId }, headers: bearer(access) })).status).toBe(200);

    const path = `/api/backup?oauthId=${encodeURIComponent(`github|${accountId}`)}`;
    const res = await server.api(path, { cookie: person.cookie });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ bapId: identity.bapId, backup });
    expect(res.headers.get("cache-control")).toBe("no-store");

    expectProblem(await server.api(path), 401);
    expectProblem(await server.api(path, { headers: bearer(access) }), 401); // an OAuth token is not a session here
    const stranger = await signUp(server);
    expectProblem(await server.api(path, { cookie: stranger.cookie }), 403, "ACCOUNT_NOT_LINKED");
  });

  it("refuses a session that owns the provider account but not the mapped identity", async () => {
    const { person: victim, identity } = await personWithIdentity();
    await post({ encryptedBackup: ciphertext() }, { cookie: victim.cookie });
    const attacker = await signUp(server);
    const accountId = `gh-${randomUUID()}`;
    await linkProviderAccount(attacker.user.id, "github", accountId);
    // A mapping that somehow points at someone else's identity must still not serve it.
    await server.db
      .insertInto("backupRecoveryLink")
      .values({ id: randomUUID(), providerAccount: `github|${accountId}`, provider: "github", accountId, bapId: identity.bapId, userId: victim.user.id, createdAt: new Date() })
      .execute();
    expectProblem(await server.api(`/api/backup?oauthId=${encodeURIComponent(`github|${accountId}`)}`, { cookie: attacker.cookie }), 403, "IDENTITY_NOT_OWNED");
  });

  it("answers 404 for an owned provider account with no recovery mapping", async () => {
    const { person } = await personWithIdentity();
    await linkProviderAccount(person.user.id, "google", "g-1");
    expectProblem(await server.api(`/api/backup?oauthId=${encodeURIComponent("google|g-1")}`, { cookie: person.cookie }), 404);
  });
});

describe("POST /api/backup and GET /api/backup/status: OAuth access token or session", () => {
  it("stores by session and by OAuth token, counting generations, with status in step", async () => {
    const { person, identity } = await personWithIdentity();
    const access = await accessTokenFor(person);
    const first = await post({ encryptedBackup: ciphertext() }, { cookie: person.cookie });
    expect(first.status).toBe(200);
    expect(first.headers.get("cache-control")).toBe("no-store");
    expect(first.json).toMatchObject({ success: true, bapId: identity.bapId, generation: 1, message: expect.any(String) });
    const second = await post({ encryptedBackup: ciphertext() }, bearer(access));
    expect(second.json).toMatchObject({ success: true, bapId: identity.bapId, generation: 2 });
    const latest = ciphertext();
    expect((await post({ encryptedBackup: latest }, bearer(person.token))).json.generation).toBe(3);

    for (const headers of [{ cookie: person.cookie }, bearer(access)]) {
      const status = await server.api("/api/backup/status", { headers });
      expect(status.status).toBe(200);
      expect(status.headers.get("cache-control")).toBe("no-store");
      expect(status.json).toMatchObject({ hasBackup: true, userId: person.user.id, bapId: identity.bapId, updatedAt: expect.any(String), linkedOAuthAccounts: [] });
    }
    const got = await server.api("/api/backup", { cookie: person.cookie });
    expect(got.json).toMatchObject({ backup: latest, generation: 3 });
  });

  it("refuses without credentials, with a bad or expired bearer, or with a Bitcoin-Auth token (401)", async () => {
    const { person, identity } = await personWithIdentity();
    const expired = await accessTokenFor(person);
    await server.db.updateTable("oauthAccessToken").set({ expiresAt: new Date(Date.now() - 1000) }).where("userId", "=", person.user.id).execute();
    const refused: Record<string, string>[] = [{}, bearer("bogus"), bearer(expired), bitcoinAuth(sign(identity.key, "/api/backup")), { "x-auth-token": sign(identity.key, "/api/backup") }];
    for (const headers of refused) {
      expectProblem(await post({ encryptedBackup: ciphertext() }, headers), 401);
      expectProblem(await server.api("/api/backup/status", { headers }), 401);
    }
    expect(await storedGeneration(identity.bapId)).toBeNull();
  });

  it("reports no backup for an identity with none, and null identity for an account with none", async () => {
    const { person, identity } = await personWithIdentity();
    const status = await server.api("/api/backup/status", { cookie: person.cookie });
    expect(status.json).toMatchObject({ hasBackup: false, updatedAt: null, bapId: identity.bapId, userId: person.user.id });
    const bare = await signUp(server);
    const none = await server.api("/api/backup/status", { cookie: bare.cookie });
    expect(none.json).toMatchObject({ hasBackup: false, bapId: null, linkedOAuthAccounts: [] });
    expectProblem(await post({ encryptedBackup: ciphertext() }, { cookie: bare.cookie }), 404, "NO_BAP_IDENTITY");
  });

  it("stores where the token's identity (referenceId) says, not at the primary", async () => {
    const { person, identity: primary } = await personWithIdentity();
    const second = await registerIdentity(person.user.id);
    const access = await accessTokenFor(person);
    await server.db.updateTable("oauthAccessToken").set({ referenceId: second.bapId }).where("userId", "=", person.user.id).execute();
    const res = await post({ encryptedBackup: ciphertext() }, bearer(access));
    expect(res.json).toMatchObject({ bapId: second.bapId, generation: 1 });
    expect(await storedGeneration(primary.bapId)).toBeNull();
    const status = await server.api("/api/backup/status", { headers: bearer(access) });
    expect(status.json).toMatchObject({ bapId: second.bapId, hasBackup: true });
  });

  it("never lets a body bapId move a backup to an identity the caller does not own", async () => {
    const { person, identity } = await personWithIdentity();
    const { person: victim, identity: victimIdentity } = await personWithIdentity();
    const victimBackup = ciphertext();
    await post({ encryptedBackup: victimBackup }, { cookie: victim.cookie });

    expectProblem(await post({ encryptedBackup: ciphertext(), bapId: victimIdentity.bapId }, { cookie: person.cookie }), 403, "IDENTITY_NOT_OWNED");
    const access = await accessTokenFor(person);
    expectProblem(await post({ encryptedBackup: ciphertext(), bapId: victimIdentity.bapId }, bearer(access)), 403, "IDENTITY_NOT_OWNED");
    const untouched = await server.api("/api/backup", { cookie: victim.cookie });
    expect(untouched.json).toMatchObject({ backup: victimBackup, generation: 1 });
    expect(await storedGeneration(identity.bapId)).toBeNull();

    // A session may name one of its own identities; an OAuth token only its own.
    const own = await registerIdentity(person.user.id);
    expect((await post({ encryptedBackup: ciphertext(), bapId: own.bapId }, { cookie: person.cookie })).json).toMatchObject({ bapId: own.bapId, generation: 1 });
    expectProblem(await post({ encryptedBackup: ciphertext(), bapId: own.bapId }, bearer(access)), 403);
    expect((await post({ encryptedBackup: ciphertext(), bapId: identity.bapId }, bearer(access))).json).toMatchObject({ bapId: identity.bapId, generation: 1 });
  });

  it("loses no update and skips no generation under 20 concurrent POSTs", async () => {
    const { person, identity } = await personWithIdentity();
    await post({ encryptedBackup: ciphertext() }, { cookie: person.cookie });
    const before = (await storedGeneration(identity.bapId))!;
    const bodies = Array.from({ length: 20 }, () => ciphertext());
    const results = await Promise.all(bodies.map((encryptedBackup) => post({ encryptedBackup }, { cookie: person.cookie })));
    for (const res of results) expect(res.status).toBe(200);
    const generations = results.map((r) => r.json.generation as number).sort((a, b) => a - b);
    expect(generations).toEqual(Array.from({ length: 20 }, (_, i) => before + 1 + i));
    expect(await storedGeneration(identity.bapId)).toBe(before + 20);
    // The stored ciphertext is the one the last generation wrote, intact.
    const last = results.find((r) => r.json.generation === before + 20)!;
    const stored = await server.api("/api/backup", { cookie: person.cookie });
    expect(stored.json.backup).toBe(bodies[results.indexOf(last)]);
  });

  it("numbers 1..20 when 20 concurrent first writes race to create the record", async () => {
    const { person, identity } = await personWithIdentity();
    const access = await accessTokenFor(person);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => post({ encryptedBackup: ciphertext() }, i % 2 ? bearer(access) : { cookie: person.cookie })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(results.map((r) => r.json.generation as number).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(await storedGeneration(identity.bapId)).toBe(20);
  });
});

describe("OAuth scopes: backup:write to write, backup:read for status (RFC 6750 §3.1)", () => {
  function expectInsufficientScope(res: { status: number; headers: Headers; json: any }, scope: string) {
    expectProblem(res, 403, "insufficient_scope");
    expect(res.headers.get("www-authenticate")).toBe(`Bearer error="insufficient_scope", scope="${scope}"`);
  }

  it("refuses an openid-only token on every route with 403 insufficient_scope naming the scope, changing nothing", async () => {
    const { person, identity } = await personWithIdentity();
    const accountId = `gh-${randomUUID()}`;
    await linkProviderAccount(person.user.id, "github", accountId);
    const stored = ciphertext();
    expect((await post({ encryptedBackup: stored }, { cookie: person.cookie })).status).toBe(200);
    const openidOnly = await accessTokenFor(person, "openid");

    expectInsufficientScope(await post({ encryptedBackup: ciphertext() }, bearer(openidOnly)), "backup:write");
    expectInsufficientScope(await server.api("/api/backup/status", { headers: bearer(openidOnly) }), "backup:read");
    expectInsufficientScope(await server.api("/api/backup/link-oauth", { body: { provider: "github", providerAccountId: accountId }, headers: bearer(openidOnly) }), "backup:write");

    expect((await server.api("/api/backup", { cookie: person.cookie })).json).toMatchObject({ backup: stored, generation: 1 });
    const links = await server.db.selectFrom("backupRecoveryLink").select("id").where("bapId", "=", identity.bapId).execute();
    expect(links).toEqual([]);
  });

  it("keeps read and write apart: a backup:read token reads status but cannot write, a backup:write token cannot read status", async () => {
    const { person, identity } = await personWithIdentity();
    const reader = await accessTokenFor(person, "openid backup:read");
    const writer = await accessTokenFor(person, "openid backup:write");

    expect((await server.api("/api/backup/status", { headers: bearer(reader) })).json).toMatchObject({ hasBackup: false, bapId: identity.bapId });
    expectInsufficientScope(await post({ encryptedBackup: ciphertext() }, bearer(reader)), "backup:write");

    const written = await post({ encryptedBackup: ciphertext() }, bearer(writer));
    expect(written.status).toBe(200);
    expect(written.json).toMatchObject({ bapId: identity.bapId, generation: 1 });
    expectInsufficientScope(await server.api("/api/backup/status", { headers: bearer(writer) }), "backup:read");
  });

  it("leaves a session unlimited by scopes: cookie and session bearer write and read as before", async () => {
    const { person } = await personWithIdentity();
    expect((await post({ encryptedBackup: ciphertext() }, { cookie: person.cookie })).json.generation).toBe(1);
    expect((await post({ encryptedBackup: ciphertext() }, bearer(person.token))).json.generation).toBe(2);
    expect((await server.api("/api/backup/status", { headers: bearer(person.token) })).json.hasBackup).toBe(true);
  });

  it("advertises both scopes in discovery and lets a client register for them", async () => {
    for (const doc of ["openid-configuration", "oauth-authorization-server"]) {
      const scopes = (await server.api(`/.well-known/${doc}`)).json.scopes_supported as string[];
      expect(scopes).toEqual(expect.arrayContaining(["backup:read", "backup:write"]));
    }
    const client = await registerClient(server, { scope: "openid backup:read backup:write" });
    expect(String(client.scope).split(" ")).toEqual(expect.arrayContaining(["backup:read", "backup:write"]));
  });

  it("names both scopes on the consent page in plain words", async () => {
    const person = await signUp(server);
    const params = { response_type: "code", client_id: clientId, redirect_uri: REDIRECT, scope: "openid backup:read backup:write", state: "s", code_challenge: pkce().challenge, code_challenge_method: "S256" };
    const res = await server.api(authorizeUrl(server, params), { cookie: person.cookie });
    const location = res.headers.get("location") ?? res.json?.url;
    expect(new URL(location, server.url).pathname).toBe("/consent");
    const page = await server.api(new URL(location, server.url).pathname + new URL(location, server.url).search, { cookie: person.cookie });
    expect(page.status).toBe(200);
    const items = [...page.text.matchAll(/<li>([^<]*)<\/li>/g)].map((m) => m[1]!);
    expect(items.some((i) => /replace your encrypted backup/i.test(i))).toBe(true);
    expect(items.some((i) => /whether your encrypted backup exists/i.test(i))).toBe(true);
    expect(items).not.toContain("backup:read");
    expect(items).not.toContain("backup:write");
  });

  it("keeps the ciphertext each write replaced, so one bad write can be undone", async () => {
    const { person, identity } = await personWithIdentity();
    const first = ciphertext();
    const second = ciphertext();
    await post({ encryptedBackup: first }, { cookie: person.cookie });
    const previous = async () => (await server.db.selectFrom("bapBackup").select("previousBackup").where("bapId", "=", identity.bapId).executeTakeFirstOrThrow()).previousBackup;
    expect(await previous()).toBeNull();
    await post({ encryptedBackup: second }, bearer(await accessTokenFor(person)));
    expect(await previous()).toBe(first);
    // A repeated write of the same ciphertext (a retry) does not push the older copy out.
    await post({ encryptedBackup: second }, { cookie: person.cookie });
    expect(await previous()).toBe(first);
    // The previous copy is never served.
    expect(JSON.stringify((await server.api("/api/backup", { cookie: person.cookie })).json)).not.toContain(first);
  });
});

describe("POST /api/backup/link-oauth: OAuth bearer and an already-linked provider account", () => {
  it("records a recovery mapping, idempotently, and status lists it", async () => {
    const { person, identity } = await personWithIdentity();
    const accountId = `gh-${randomUUID()}`;
    await linkProviderAccount(person.user.id, "github", accountId);
    const access = await accessTokenFor(person);
    const res = await server.api("/api/backup/link-oauth", { body: { provider: "github", providerAccountId: accountId }, headers: bearer(access) });
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.json).toMatchObject({ success: true, bapId: identity.bapId, provider: "github", accountId });
    const again = await server.api("/api/backup/link-oauth", { body: { provider: "github", providerAccountId: accountId }, headers: bearer(access) });
    expect(again.status).toBe(200);
    const status = await server.api("/api/backup/status", { headers: bearer(access) });
    expect(status.json.linkedOAuthAccounts).toEqual([{ provider: "github", accountId, linkedAt: expect.any(String) }]);
    // It records a mapping only: no backup was created.
    expect(status.json.hasBackup).toBe(false);
  });

  it("refuses a session cookie or session bearer token (401): an OAuth token is required", async () => {
    const { person } = await personWithIdentity();
    await linkProviderAccount(person.user.id, "github", "cookie-only");
    const body = { provider: "github", providerAccountId: "cookie-only" };
    expectProblem(await server.api("/api/backup/link-oauth", { body, cookie: person.cookie }), 401);
    expectProblem(await server.api("/api/backup/link-oauth", { body, headers: bearer(person.token) }), 401);
    expectProblem(await server.api("/api/backup/link-oauth", { body }), 401);
    const rows = await server.db.selectFrom("backupRecoveryLink").select("id").where("userId", "=", person.user.id).execute();
    expect(rows).toEqual([]);
  });

  it("answers 403 ACCOUNT_NOT_LINKED when the user has no such provider account", async () => {
    const { person } = await personWithIdentity();
    const access = await accessTokenFor(person);
    const other = await signUp(server);
    await linkProviderAccount(other.user.id, "github", "someone-elses");
    for (const body of [{ provider: "github", providerAccountId: "never-linked" }, { provider: "github", providerAccountId: "someone-elses" }]) {
      expectProblem(await server.api("/api/backup/link-oauth", { body, headers: bearer(access) }), 403, "ACCOUNT_NOT_LINKED");
    }
  });

  it("answers 409 OAUTH_ALREADY_LINKED when the provider account already recovers another identity", async () => {
    const { person } = await personWithIdentity();
    const accountId = `gh-${randomUUID()}`;
    await linkProviderAccount(person.user.id, "github", accountId);
    const access = await accessTokenFor(person);
    const body = { provider: "github", providerAccountId: accountId };
    expect((await server.api("/api/backup/link-oauth", { body, headers: bearer(access) })).status).toBe(200);
    // The same provider account, now asked for another identity of the same user.
    const second = await registerIdentity(person.user.id);
    const otherToken = await accessTokenFor(person);
    await server.db.updateTable("oauthAccessToken").set({ referenceId: second.bapId }).where("userId", "=", person.user.id).execute();
    expectProblem(await server.api("/api/backup/link-oauth", { body, headers: bearer(otherToken) }), 409, "OAUTH_ALREADY_LINKED");
  });

  it("refuses bad bodies with 400/415 problems", async () => {
    const { person } = await personWithIdentity();
    const access = await accessTokenFor(person);
    for (const body of [{}, { provider: "github" }, { provider: 7, providerAccountId: "x" }, { provider: "git hub", providerAccountId: "x" }, { provider: "credential", providerAccountId: person.user.id }]) {
      expectProblem(await server.api("/api/backup/link-oauth", { body, headers: bearer(access) }), 400);
    }
    expectProblem(await server.api("/api/backup/link-oauth", { body: "{not json", headers: bearer(access) }), 400);
    expectProblem(await server.api("/api/backup/link-oauth", { body: "provider=github", headers: { ...bearer(access), "content-type": "application/x-www-form-urlencoded" } }), 415);
  });
});

describe("GET, POST /api/backup/sync: Authorization: Bitcoin-Auth by the member key", () => {
  it("upserts without incrementing generation, and GET returns it", async () => {
    const { person, identity } = await personWithIdentity();
    const created = await sync(identity.key, { bapId: identity.bapId, encryptedBackup: ciphertext() });
    expect(created.status).toBe(200);
    expect(created.headers.get("cache-control")).toBe("no-store");
    expect(created.json).toMatchObject({ success: true, bapId: identity.bapId, generation: 0 });

    await post({ encryptedBackup: ciphertext() }, { cookie: person.cookie });
    await post({ encryptedBackup: ciphertext() }, { cookie: person.cookie });
    expect(await storedGeneration(identity.bapId)).toBe(2);
    const synced = ciphertext();
    const updated = await sync(identity.key, { bapId: identity.bapId, encryptedBackup: synced });
    expect(updated.json).toMatchObject({ success: true, generation: 2 });
    expect(await storedGeneration(identity.bapId)).toBe(2);

    const got = await server.api(`${SYNC}?bapId=${identity.bapId}`, { headers: bitcoinAuth(sign(identity.key, SYNC)) });
    expect(got.status).toBe(200);
    expect(got.headers.get("cache-control")).toBe("no-store");
    expect(got.json).toMatchObject({ bapId: identity.bapId, backup: synced, generation: 2, lastUpdated: expect.any(String) });
    // The published Sigma client's pullBackup reads the ciphertext as `encryptedBackup`.
    expect(got.json.encryptedBackup).toBe(synced);
  });

  it("takes the proof in x-auth-token as well as Authorization: Bitcoin-Auth (spec, Authentication)", async () => {
    const { identity } = await personWithIdentity();
    const raw = JSON.stringify({ bapId: identity.bapId, encryptedBackup: ciphertext() });
    const pushed = await server.api(SYNC, { method: "POST", body: raw, headers: { "x-auth-token": sign(identity.key, SYNC, raw) } });
    expect(pushed.status, pushed.text).toBe(200);
    const pulled = await server.api(`${SYNC}?bapId=${identity.bapId}`, { headers: { "x-auth-token": sign(identity.key, SYNC) } });
    expect(pulled.status).toBe(200);
    expect(pulled.json).toMatchObject({ bapId: identity.bapId, backup: JSON.parse(raw).encryptedBackup, encryptedBackup: JSON.parse(raw).encryptedBackup });
    // The same token in both headers is one proof.
    const token = sign(identity.key, SYNC);
    expect((await server.api(`${SYNC}?bapId=${identity.bapId}`, { headers: { "x-auth-token": token, ...bitcoinAuth(token) } })).status).toBe(200);
    // Single use holds whichever header carried it.
    expect((await server.api(`${SYNC}?bapId=${identity.bapId}`, { headers: bitcoinAuth(token) })).status).toBe(401);
  });

  it("accepts an account whose own key is the identity's member key, with no registration record", async () => {
    const person = await signUp(server);
    const identity = newIdentity();
    await server.db.updateTable("user").set({ pubkey: identity.pubkey }).where("id", "=", person.user.id).execute();
    const res = await sync(identity.key, { bapId: identity.bapId, encryptedBackup: ciphertext() });
    expect(res.status).toBe(200);
    const row = await server.db.selectFrom("bapBackup").select("userId").where("bapId", "=", identity.bapId).executeTakeFirst();
    expect(row?.userId).toBe(person.user.id);
  });

  it("answers 404 when no profile or account matches", async () => {
    const stranger = newIdentity();
    expectProblem(await sync(stranger.key, { bapId: stranger.bapId, encryptedBackup: ciphertext() }), 404, "PROFILE_NOT_FOUND");
    expect(await storedGeneration(stranger.bapId)).toBeNull();
    expectProblem(await server.api(`${SYNC}?bapId=${stranger.bapId}`, { headers: bitcoinAuth(sign(stranger.key, SYNC)) }), 404);
    const { identity } = await personWithIdentity();
    expectProblem(await server.api(`${SYNC}?bapId=${identity.bapId}`, { headers: bitcoinAuth(sign(identity.key, SYNC)) }), 404, "BACKUP_NOT_FOUND");
  });

  it("refuses other keys (403) and bad, misdirected, replayed or body-swapped tokens (401), changing nothing", async () => {
    const { person, identity } = await personWithIdentity();
    const original = ciphertext();
    await sync(identity.key, { bapId: identity.bapId, encryptedBackup: original });
    const body = { bapId: identity.bapId, encryptedBackup: ciphertext() };
    const raw = JSON.stringify(body);

    expectProblem(await sync(newIdentity().key, body), 403, "IDENTITY_NOT_OWNED");
    const cases: Record<string, Awaited<ReturnType<typeof sync>>> = {
      "path with a query": await sync(identity.key, body, { signPath: `${SYNC}?bapId=${identity.bapId}` }),
      "another path": await sync(identity.key, body, { signPath: "/api/backup" }),
      "another body": await sync(identity.key, body, { signedBody: JSON.stringify({ ...body, encryptedBackup: ciphertext() }) }),
      "no body bound": await sync(identity.key, body, { signedBody: "" }),
      // Either header may carry the proof; two different tokens in them are ambiguous.
      "x-auth-token and another Authorization token": await server.api(SYNC, { method: "POST", body: raw, headers: { "x-auth-token": sign(identity.key, SYNC, raw), ...bitcoinAuth(sign(identity.key, SYNC, raw, new Date(Date.now() - 1000).toISOString())) } }),
      "session cookie": await server.api(SYNC, { method: "POST", body: raw, cookie: person.cookie }),
      "OAuth bearer": await server.api(SYNC, { method: "POST", body: raw, headers: bearer(await accessTokenFor(person)) }),
      stale: await server.api(SYNC, { method: "POST", body: raw, headers: bitcoinAuth(sign(identity.key, SYNC, raw, new Date(Date.now() - 10 * 60_000).toISOString())) }),
    };
    for (const [name, res] of Object.entries(cases)) {
      expect(res.status, name).toBe(401);
      expect(res.headers.get("content-type"), name).toContain("application/problem+json");
    }
    const once = sign(identity.key, SYNC, raw);
    expect((await server.api(SYNC, { method: "POST", body: raw, headers: bitcoinAuth(once) })).status).toBe(200);
    expectProblem(await server.api(SYNC, { method: "POST", body: raw, headers: bitcoinAuth(once) }), 401);

    const getCases = [bitcoinAuth(sign(identity.key, `${SYNC}?bapId=${identity.bapId}`)), bitcoinAuth(sign(newIdentity().key, SYNC)), { cookie: person.cookie } as Record<string, string>, {}];
    const statuses = [];
    for (const headers of getCases) statuses.push((await server.api(`${SYNC}?bapId=${identity.bapId}`, { headers })).status);
    expect(statuses).toEqual([401, 403, 401, 401]);
  });
});

describe("the published Sigma client's sync calls (pushBackup, pullBackup)", () => {
  /** A local signer's keystore: a real (Type-42) bsv-bap identity, registered through the API with the key the client signs with. */
  async function localSigner() {
    const person = await signUp(server);
    const bap = new BAP({ rootPk: PrivateKey.fromRandom().toWif() });
    const bapId = bap.newId().getIdentityKey();
    const member = PrivateKey.fromWif(bap.getId(bapId)!.exportMember().wif);
    const body = JSON.stringify({ bapId });
    const registered = await server.api("/api/user/bap-ids", { cookie: person.cookie, body, headers: { "x-auth-token": sign(member, "/api/user/bap-ids", body) } });
    expect(registered.status).toBe(201);
    return { person, bap, bapId, member };
  }
  const config = () => ({ serverUrl: server.url });

  it("pushes, then pulls the same ciphertext with its lastUpdated", async () => {
    const { bap, bapId } = await localSigner();
    const first = ciphertext();
    expect(await pushBackup(bap, bapId, first, config())).toEqual({ success: true });
    const pulled = await pullBackup(bap, bapId, config());
    expect(pulled).toEqual({ success: true, encryptedBackup: first, lastUpdated: expect.any(String) });
    expect(Number.isNaN(Date.parse(pulled.lastUpdated!))).toBe(false);
    // A push replaces it, without a generation (spec: sync upserts without incrementing).
    const second = ciphertext();
    expect((await pushBackup(bap, bapId, second, config())).success).toBe(true);
    expect((await pullBackup(bap, bapId, config())).encryptedBackup).toBe(second);
    expect(await storedGeneration(bapId)).toBe(0);
    expect(await checkBackupStatus(bap, bapId, config())).toEqual({ exists: true, lastUpdated: expect.any(String) });
  });

  it("reports a missing backup as missing, and refuses a keystore whose member key is not the registered one", async () => {
    const { bap, bapId } = await localSigner();
    const missing = await pullBackup(bap, bapId, config());
    expect(missing).toMatchObject({ success: false, error: expect.any(String) });
    expect(missing.encryptedBackup).toBeUndefined();
    expect((await checkBackupStatus(bap, bapId, config())).exists).toBe(false);

    // The keystore rotated and the registration still names the old member key: its tokens prove nothing.
    const rotated = await localSigner();
    rotated.bap.getId(rotated.bapId)!.incrementPath();
    expect(await pushBackup(rotated.bap, rotated.bapId, ciphertext(), config())).toMatchObject({ success: false, error: expect.any(String) });
    expect(await storedGeneration(rotated.bapId)).toBeNull();
  });
});

describe("bad input is a 4xx problem, never a 500, and changes nothing", () => {
  it("refuses malformed JSON, wrong types, plaintext, bad bapIds, selectors and content types", async () => {
    const { person, identity } = await personWithIdentity();
    const good = ciphertext();
    await post({ encryptedBackup: good }, { cookie: person.cookie });
    const cookie = { cookie: person.cookie };
    const bad: Array<[unknown, number]> = [
      ["{not json", 400],
      ["[]", 400],
      ["null", 400],
      [{}, 400],
      [{ encryptedBackup: 42 }, 400],
      [{ encryptedBackup: ["a"] }, 400],
      [{ encryptedBackup: "" }, 400],
      [{ encryptedBackup: JSON.stringify({ wif: PrivateKey.fromRandom().toWif() }) }, 400],
      [{ encryptedBackup: ciphertext(), bapId: "not a bap id!" }, 400],
      [{ encryptedBackup: ciphertext(), bapId: 12 }, 400],
    ];
    for (const [body, status] of bad) {
      const res = await post(body, cookie);
      expectProblem(res, status);
    }
    const typed = await post({ encryptedBackup: 42 }, cookie);
    expect(typed.json.errors).toEqual([expect.objectContaining({ pointer: "/encryptedBackup" })]);
    expectProblem(await server.api("/api/backup", { method: "POST", body: "encryptedBackup=x", headers: { ...cookie, "content-type": "text/plain" } }), 415);

    for (const query of ["?bapId=0OIl", "?bapId=x", `?bapId=${identity.bapId}&bapId=${identity.bapId}`, `?bapId=${identity.bapId}&oauthId=github|1`, "?oauthId=nobar", "?oauthId=|x"]) {
      expectProblem(await server.api(`/api/backup${query}`, cookie), 400);
    }
    expectProblem(await server.api(`${SYNC}?bapId=bad!`, { headers: bitcoinAuth(sign(identity.key, SYNC)) }), 400);
    expectProblem(await sync(identity.key, { bapId: "bad!", encryptedBackup: ciphertext() }), 400);
    expectProblem(await sync(identity.key, { bapId: identity.bapId, encryptedBackup: { nested: true } }), 400);

    const after = await server.api("/api/backup", cookie);
    expect(after.json).toMatchObject({ backup: good, generation: 1 });
  });

  it("answers 413 past BACKUP_MAX_BYTES, accepts a backup up to it (beyond the 64 KiB default)", async () => {
    const { person, identity } = await personWithIdentity();
    const big = "A".repeat(MAX);
    const ok = await post({ encryptedBackup: big }, { cookie: person.cookie });
    expect(ok.status).toBe(200);
    expectProblem(await post({ encryptedBackup: "A".repeat(MAX + 4) }, { cookie: person.cookie }), 413);
    expectProblem(await post({ encryptedBackup: "A".repeat(MAX * 2) }, { cookie: person.cookie }), 413);
    expectProblem(await sync(identity.key, { bapId: identity.bapId, encryptedBackup: "A".repeat(MAX + 4) }), 413);
    const stored = await server.api("/api/backup", { cookie: person.cookie });
    expect(stored.json).toMatchObject({ generation: 1 });
    expect(stored.json.backup.length).toBe(MAX);
    expect(loadEnv({}).backupMaxBytes).toBe(5 * 1024 * 1024);
  });

  it("has no DELETE route: 405, and the backup stays", async () => {
    const { person, identity } = await personWithIdentity();
    await post({ encryptedBackup: ciphertext() }, { cookie: person.cookie });
    for (const path of ["/api/backup", `/api/backup?bapId=${identity.bapId}`, SYNC, "/api/backup/status"]) {
      const res = await server.api(path, { method: "DELETE", cookie: person.cookie });
      expectProblem(res, 405);
      expect(res.headers.get("allow")).toBeTruthy();
    }
    expect(await storedGeneration(identity.bapId)).toBe(1);
  });
});

describe("sync rate limit: 20 requests per minute per client IP", () => {
  const limited = useTestServer({ RATE_LIMIT_ENABLED: "true", TRUST_PROXY: "true" });

  it("answers 429 with Retry-After past 20, per IP", async () => {
    const ip = uniqueClientIp();
    const headers = { "x-forwarded-for": ip };
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) statuses.push((await limited.api(`${SYNC}?bapId=1BackupTestXXXXXXXXXXXXXX`, { headers })).status);
    expect(statuses.every((s) => s === 401)).toBe(true);
    const over = await limited.api(SYNC, { method: "POST", body: { bapId: "x" }, headers });
    expectProblem(over, 429);
    const retryAfter = Number(over.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // Another client address has its own budget; other backup routes are not counted.
    expect((await limited.api(SYNC, { headers: { "x-forwarded-for": uniqueClientIp() } })).status).toBe(401);
    expect((await limited.api("/api/backup/status", { headers })).status).toBe(401);
  });
  it("limits GET /api/backup?bapId with x-auth-token (a signature check each) to 20 per minute per IP", async () => {
    const ip = uniqueClientIp();
    const headers = { "x-forwarded-for": ip };
    const { key, bapId } = newIdentity();
    const path = `/api/backup?bapId=${bapId}`;
    // Redis counts in windows aligned to the clock's minutes: keep all 21 requests in one.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 45_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoMinute + 100));
    const statuses: number[] = [];
    // Validly signed by a key nobody registered: each one costs a full signature check.
    for (let i = 0; i < 20; i++) statuses.push((await limited.api(path, { headers: { ...headers, "x-auth-token": sign(key, path, undefined) } })).status);
    expect(statuses.every((s) => s !== 429)).toBe(true);
    const over = await limited.api(path, { headers: { ...headers, "x-auth-token": sign(key, path, undefined) } });
    expectProblem(over, 429);
    const retryAfter = Number(over.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // Another client address has its own budget; the sync budget is separate.
    expect((await limited.api(path, { headers: { "x-forwarded-for": uniqueClientIp(), "x-auth-token": sign(key, path, undefined) } })).status).not.toBe(429);
    expect((await limited.api(`${SYNC}?bapId=${bapId}`, { headers })).status).toBe(401);
  });
});
