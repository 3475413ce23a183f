import { describe, expect, it } from "vitest";
import { keep } from "../../lib/kept.js";

describe("keep (a bounded memo)", () => {
  it("holds at most max entries, dropping the oldest; a key set again is replaced, not added", () => {
    const map = new Map<string, number>();
    for (let i = 0; i < 5; i++) keep(map, `k${i}`, i, 3);
    expect([...map]).toEqual([["k2", 2], ["k3", 3], ["k4", 4]]);
    keep(map, "k2", 20, 3);
    expect(map.size).toBe(3);
    expect(map.get("k2")).toBe(20);
    expect(map.has("k3")).toBe(true);
    // Set again, a key keeps its place: it is still the oldest.
    keep(map, "k5", 5, 3);
    expect([...map.keys()]).toEqual(["k3", "k4", "k5"]);
  });
});
