import { describe, expect, it } from "vitest";
import { timeOrderedId } from "../../lib/db/ids.js";

/**
 * lib/db/ids.ts: the refresh lane's token rows get ids that follow time (so a rotation's
 * inserts land on the last leaf of each id index), 32 characters and unguessable.
 */
describe("time-ordered row ids", () => {
  it("are 32 characters, in the order they were made, with 23 random characters each", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 50; i++) {
      ids.push(timeOrderedId());
      if (i % 10 === 0) await new Promise((r) => setTimeout(r, 2));
    }
    for (const id of ids) expect(id).toMatch(/^[0-9a-z]{9}[A-Za-z0-9]{23}$/);
    const prefixes = ids.map((id) => id.slice(0, 9));
    expect([...prefixes].sort()).toEqual(prefixes);
    expect(new Set(prefixes).size).toBeGreaterThan(1);
    expect(Math.abs(parseInt(prefixes.at(-1)!, 36) - Date.now())).toBeLessThan(60_000);
    expect(new Set(ids.map((id) => id.slice(9))).size).toBe(ids.length);
  });
});
