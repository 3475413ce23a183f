import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { enrolKey, newIdentity, registerIdentity, type TestIdentity } from "../helpers/bap.js";
import { useTestServer } from "../helpers/fixtures.js";
import { signUp } from "../helpers/oauth.js";
import { cookiesOf } from "../helpers/server.js";

/**
 * Key-only accounts get the address bap-<hex of bapId>@bap.invalid. BAP ids are public, so that
 * domain is reserved: nobody may sign up with or change to one of its addresses (400), and a
 * unique-constraint clash anywhere answers 409, never 500.
 */

const server = useTestServer();

const keyAddress = (id: TestIdentity) => `bap-${Buffer.from(id.bapId).toString("hex")}@bap.invalid`;
const now = () => new Date();

const enrol = (id: TestIdentity) => enrolKey(server, id);

function expectReserved(res: { status: number; json: any }) {
  expect(res.status).toBe(400);
  expect(res.json).toMatchObject({ code: "RESERVED_EMAIL_DOMAIN", message: expect.any(String) });
}

describe("the key-account domain is reserved", () => {
  it("refuses sign-up with a key's address in any case or below the domain, and the key holder still enrols", async () => {
    const id = newIdentity();
    for (const email of [keyAddress(id), keyAddress(id).toUpperCase(), `someone@BAP.Invalid`, "someone@mail.bap.invalid"]) {
      expectReserved(await server.api("/api/auth/sign-up/email", { body: { name: "Squatter", email, password: "a long enough password" } }));
    }
    const enrolled = await enrol(id);
    expect(enrolled.status, enrolled.text).toBe(200);
    const user = await server.db.selectFrom("user").select(["email"]).where("id", "=", enrolled.json.user.id).executeTakeFirstOrThrow();
    expect(user.email).toBe(keyAddress(id));
  });

  it("refuses a change of address into the domain, for a person and for a key account", async () => {
    const person = await signUp(server);
    const id = newIdentity();
    expectReserved(await server.api("/api/auth/change-email", { cookie: person.cookie, body: { newEmail: keyAddress(id) } }));
    const keyAccount = await enrol(newIdentity());
    expectReserved(await server.api("/api/auth/change-email", { cookie: cookiesOf(keyAccount.headers), body: { newEmail: keyAddress(id) } }));
    const row = await server.db.selectFrom("user").select(["email"]).where("id", "=", person.user.id).executeTakeFirstOrThrow();
    expect(row.email).toBe(person.email.toLowerCase());
    expect((await enrol(id)).status).toBe(200);
  });

  it("refuses an administrator's new account in the domain", async () => {
    const adminPerson = await signUp(server);
    await server.db.updateTable("user").set({ role: "admin" }).where("id", "=", adminPerson.user.id).execute();
    // A fresh session: one cached in Redis still carries the old role.
    const signedIn = await server.api("/api/auth/sign-in/email", { body: { email: adminPerson.email, password: adminPerson.password } });
    const res = await server.api("/api/auth/admin/create-user", { cookie: cookiesOf(signedIn.headers), body: { name: "Made", email: keyAddress(newIdentity()), password: "a long enough password" } });
    expectReserved(res);
  });
});

describe("a unique-constraint clash answers 409, never 500", () => {
  it("key enrolment whose address is already taken (an account squatted before the domain was reserved) answers 409", async () => {
    const id = newIdentity();
    await server.db
      .insertInto("user")
      .values({ id: randomUUID(), name: "Squatter", email: keyAddress(id), emailVerified: false, createdAt: now(), updatedAt: now() })
      .execute();
    const res = await enrol(id);
    expect(res.status, res.text).toBe(409);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.json).toMatchObject({ code: expect.any(String), message: expect.any(String) });
    expect(await server.db.selectFrom("bapIdentity").select("id").where("bapId", "=", id.bapId).execute()).toEqual([]);
  });

  it("two accounts racing to register the same identity: one 201, the other 409, no 500", async () => {
    const [a, b] = await Promise.all([signUp(server), signUp(server)]);
    for (let round = 0; round < 5; round++) {
      const id = newIdentity();
      // Two tokens: each is single-use (replay protection), both by the member key.
      const post = (cookie: string) => registerIdentity(server, cookie, id);
      const results = await Promise.all([post(a.cookie), post(b.cookie)]);
      const statuses = results.map((r) => r.status).sort();
      expect(statuses, results.map((r) => r.text).join("\n")).toEqual([201, 409]);
      const refused = results.find((r) => r.status === 409)!;
      expect(refused.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    }
  });
});
