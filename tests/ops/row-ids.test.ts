import { describe, expect, it } from "vitest";
import { rowId } from "../../lib/db/ids.js";
import { useTestServer } from "../helpers/fixtures.js";

/**
 * lib/db/ids.ts: the token tables' row ids follow time (so a rotation's inserts land on the
 * last leaf of each id index), every other table keeps better-auth's random id; all are 32
 * characters and unguessable.
 */
const server = useTestServer();

describe("row ids", () => {
  it("token rows: 32 characters, in the order they were made, 23 random characters each", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 50; i++) {
      ids.push(rowId({ model: i % 2 ? "oauthAccessToken" : "oauthRefreshToken" }));
      if (i % 10 === 0) await new Promise((r) => setTimeout(r, 2));
    }
    for (const id of ids) expect(id).toMatch(/^[0-9a-z]{9}[A-Za-z0-9]{23}$/);
    const prefixes = ids.map((id) => id.slice(0, 9));
    expect([...prefixes].sort()).toEqual(prefixes);
    expect(parseInt(prefixes.at(-1)!, 36)).toBeGreaterThanOrEqual(Date.now() - 60_000);
    expect(new Set(ids.map((id) => id.slice(9))).size).toBe(ids.length);
  });

  it("every other table: better-auth's 32 random characters, with no time in them", () => {
    const ids = Array.from({ length: 200 }, () => rowId({ model: "user" }));
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9]{32}$/);
    // Random, not time-ordered: the first nine characters differ within the same millisecond.
    expect(new Set(ids.map((id) => id.slice(0, 9))).size).toBe(ids.length);
    expect(rowId({ model: "session", size: 16 })).toMatch(/^[A-Za-z0-9]{16}$/);
  });

  it("is what the server gives the rows a refresh writes, and only those", async () => {
    const ctx = await server.auth.$context;
    expect(ctx.generateId({ model: "oauthRefreshToken" })).toMatch(/^[0-9a-z]{9}/);
    const now = parseInt(String(ctx.generateId({ model: "oauthAccessToken" })).slice(0, 9), 36);
    expect(Math.abs(now - Date.now())).toBeLessThan(60_000);
    const user = String(ctx.generateId({ model: "user" }));
    expect(Math.abs(parseInt(user.slice(0, 9), 36) - Date.now())).toBeGreaterThan(60_000);
  });
});
