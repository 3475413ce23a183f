import { runWithRequestState } from "@better-auth/core/context";
import Sqlite from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { forgetRequestReads, readOncePerRequest } from "../../plugins/core-store/request-reads.js";
import { enrolKey, keySignIn, newIdentity } from "../helpers/bap.js";
import { authorize, pkce, REDIRECT, registerClient, signUp, token } from "../helpers/oauth.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

type Query = { model: string; where?: { field: string; value: unknown; operator?: string }[]; select?: string[]; data?: Record<string, unknown> };

/** An adapter over one in-memory user row that counts the reads that reach it. */
function countingAdapter(maxAgeMs?: number) {
  const row = { id: "u1", name: "Ada", subscriptionTier: "free" };
  const client = { clientId: "c1", disabled: false, redirectUris: ["https://rp.example/cb"] };
  const calls = { findOne: 0, failNext: false };
  const adapter = {
    findOne: async (query: Query) => {
      calls.findOne++;
      await new Promise((ok) => setTimeout(ok, 1));
      if (calls.failNext) {
        calls.failNext = false;
        throw new Error("connection lost");
      }
      if (query.model === "oauthClient") return { ...client, redirectUris: [...client.redirectUris] };
      if (query.model !== "user") return { id: "other" };
      return query.where?.[0]?.value === row.id ? { ...row } : null;
    },
    update: async (query: Query) => {
      Object.assign(query.model === "oauthClient" ? client : row, query.data);
      return { ...(query.model === "oauthClient" ? client : row) };
    },
  };
  readOncePerRequest(adapter as never, maxAgeMs);
  return { adapter, calls, row, client };
}

const byId = (id: string) => ({ model: "user", where: [{ field: "id", value: id }] });
const inRequest = <T>(fn: () => Promise<T>) => runWithRequestState(new WeakMap(), fn);

describe("one read of a row by its key per request (plugins/core-store/request-reads.ts)", () => {
  it("reads the row once, concurrent callers included, and gives each caller its own copy", async () => {
    const { adapter, calls } = countingAdapter();
    const [a, b, c] = await inRequest(() => Promise.all([adapter.findOne(byId("u1")), adapter.findOne(byId("u1")), adapter.findOne(byId("u1"))]));
    expect(calls.findOne).toBe(1);
    expect(a).toEqual({ id: "u1", name: "Ada", subscriptionTier: "free" });
    expect(b).toEqual(a);
    expect(b).not.toBe(a);
    (a as { name: string }).name = "changed by one caller";
    expect((c as { name: string }).name).toBe("Ada");
  });

  it("does not keep a read across requests, outside a request, or for any other query", async () => {
    const { adapter, calls } = countingAdapter();
    await inRequest(() => adapter.findOne(byId("u1")));
    await inRequest(() => adapter.findOne(byId("u1")));
    expect(calls.findOne).toBe(2);
    await adapter.findOne(byId("u1"));
    await adapter.findOne(byId("u1"));
    expect(calls.findOne).toBe(4);
    await inRequest(async () => {
      await adapter.findOne({ ...byId("u1"), select: ["name"] });
      await adapter.findOne({ ...byId("u1"), select: ["name"] });
      await adapter.findOne({ model: "user", where: [{ field: "email", value: "a@example.com" }] });
      await adapter.findOne({ model: "user", where: [{ field: "email", value: "a@example.com" }] });
      await adapter.findOne({ model: "session", where: [{ field: "id", value: "u1" }] });
      await adapter.findOne({ model: "session", where: [{ field: "id", value: "u1" }] });
      await adapter.findOne({ model: "user", where: [{ field: "id", value: "u1", operator: "ne" }] });
    });
    expect(calls.findOne).toBe(11);
  });

  it("a write to the user table in the request, through the adapter or around it, is seen by the next read", async () => {
    const { adapter, calls, row } = countingAdapter();
    const seen = await inRequest(async () => {
      const before = await adapter.findOne(byId("u1"));
      await adapter.update({ model: "user", where: [{ field: "id", value: "u1" }], data: { subscriptionTier: "pro" } });
      const afterAdapterWrite = await adapter.findOne(byId("u1"));
      row.name = "Grace"; // a direct write, as plugins/core-store/users.ts makes them
      await forgetRequestReads();
      const afterDirectWrite = await adapter.findOne(byId("u1"));
      return [before, afterAdapterWrite, afterDirectWrite] as unknown as { subscriptionTier: string; name: string }[];
    });
    expect(seen.map((u) => u.subscriptionTier)).toEqual(["free", "pro", "pro"]);
    expect(seen.map((u) => u.name)).toEqual(["Ada", "Ada", "Grace"]);
    expect(calls.findOne).toBe(3);
  });

  it("shares a read for a short while only, within the same request", async () => {
    const { adapter, calls } = countingAdapter(20);
    await inRequest(async () => {
      await adapter.findOne(byId("u1"));
      await adapter.findOne(byId("u1"));
      expect(calls.findOne).toBe(1);
      await new Promise((ok) => setTimeout(ok, 40));
      await adapter.findOne(byId("u1"));
      await adapter.findOne(byId("u1"));
    });
    expect(calls.findOne).toBe(2);
  });

  it("does not keep a failed read: the next caller asks again", async () => {
    const { adapter, calls } = countingAdapter();
    calls.failNext = true;
    const user = await inRequest(async () => {
      await expect(adapter.findOne(byId("u1"))).rejects.toThrow("connection lost");
      return adapter.findOne(byId("u1"));
    });
    expect(user).toMatchObject({ id: "u1" });
    expect(calls.findOne).toBe(2);
  });
  it("keeps an OAuth client by client_id the same way, with its lists copied, and forgets it when the client is written", async () => {
    const { adapter, calls } = countingAdapter();
    const byClientId = { model: "oauthClient", where: [{ field: "clientId", value: "c1" }] };
    const seen = await inRequest(async () => {
      const first = (await adapter.findOne(byClientId)) as { redirectUris: string[]; disabled: boolean };
      first.redirectUris.push("https://attacker.example/cb");
      const second = (await adapter.findOne(byClientId)) as { redirectUris: string[]; disabled: boolean };
      await adapter.findOne({ model: "oauthClient", where: [{ field: "id", value: "c1" }] });
      await adapter.update({ model: "oauthClient", where: [{ field: "clientId", value: "c1" }], data: { disabled: true } });
      const third = (await adapter.findOne(byClientId)) as { redirectUris: string[]; disabled: boolean };
      return { second, third };
    });
    expect(seen.second.redirectUris).toEqual(["https://rp.example/cb"]);
    expect(seen.second.disabled).toBe(false);
    expect(seen.third.disabled).toBe(true);
    // clientId read, id read (not kept), clientId read again after the write
    expect(calls.findOne).toBe(3);
  });
});

/**
 * The SQLite statements run while `fn` runs that select from `table` (better-sqlite3 has one
 * Statement class: a statement of any database shows the methods every statement runs by).
 */
async function statementsReading(table: string, fn: () => Promise<unknown>): Promise<string[]> {
  const scratch = new Sqlite(":memory:");
  const statement = Object.getPrototypeOf(scratch.prepare("select 1")) as Record<string, (...args: unknown[]) => unknown>;
  scratch.close();
  const reading = new RegExp(`^select\\b[\\s\\S]*\\bfrom (\\(select \\* from )?"${table}"`, "i");
  const seen: string[] = [];
  const originals = Object.fromEntries(["all", "get", "iterate", "run"].map((m) => [m, statement[m]!]));
  for (const [name, original] of Object.entries(originals)) {
    statement[name] = function (this: { source: string }, ...args: unknown[]) {
      if (reading.test(this.source)) seen.push(this.source);
      return original.apply(this, args);
    };
  }
  try {
    await fn();
  } finally {
    Object.assign(statement, originals);
  }
  return seen;
}

describe("sign-in and OAuth endpoints with the shared reads", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  async function enrolled() {
    const id = newIdentity();
    const res = await enrolKey(server, id);
    expect(res.status).toBe(200);
    return { id, userId: res.json.user.id as string };
  }

  it("stamps the session with the tier recorded on the user, and answers the user's own fields", async () => {
    const { id, userId } = await enrolled();
    await server.db.updateTable("user").set({ subscriptionTier: "pro", name: "Key holder" }).where("id", "=", userId).execute();
    const res = await keySignIn(server, id);
    expect(res.status).toBe(200);
    expect(res.json.user).toMatchObject({ id: userId, name: "Key holder", pubkey: id.pubkey });
    const session = await server.db.selectFrom("session").select(["subscriptionTier", "userId", "selectedBapId"]).where("token", "=", res.json.token).executeTakeFirstOrThrow();
    expect(session).toEqual({ subscriptionTier: "pro", userId, selectedBapId: id.bapId });
  });

  it("refuses a banned account's key, and signs it in again once the ban is lifted", async () => {
    const { id, userId } = await enrolled();
    await server.db.updateTable("user").set({ banned: true }).where("id", "=", userId).execute();
    const refused = await keySignIn(server, id);
    expect(refused.status).toBe(403);
    expect(refused.json.code).toBe("BANNED_USER");
    await server.db.updateTable("user").set({ banned: false }).where("id", "=", userId).execute();
    expect((await keySignIn(server, id)).status).toBe(200);
  });

  it.skipIf(Boolean(process.env.TEST_DATABASE_URL))("reads the user's row once per sign-in (SQLite statements counted)", async () => {
    const { id } = await enrolled();
    const reads = await statementsReading("user", async () => expect((await keySignIn(server, id)).status).toBe(200));
    expect(reads).toHaveLength(1);
  });

  it.skipIf(Boolean(process.env.TEST_DATABASE_URL))("reads the client's row once at the authorization endpoint and once at the token endpoint (SQLite statements counted)", async () => {
    const person = await signUp(server);
    const client = await registerClient(server);
    // The first authorization asks for consent; the second, counted, finds it.
    await authorize(server, { clientId: client.client_id, cookie: person.cookie });
    const { verifier, challenge } = pkce();
    let code: string | null = null;
    const atAuthorize = await statementsReading("oauthClient", async () => {
      code = (await authorize(server, { clientId: client.client_id, cookie: person.cookie, challenge })).code;
    });
    expect(code).toBeTruthy();
    const atToken = await statementsReading("oauthClient", async () => {
      const res = await token(server, { grant_type: "authorization_code", code: code!, redirect_uri: REDIRECT, client_id: client.client_id, code_verifier: verifier });
      expect(res.status).toBe(200);
      expect(typeof res.json.access_token).toBe("string");
    });
    expect(atAuthorize).toHaveLength(1);
    expect(atToken).toHaveLength(1);
  });

});
