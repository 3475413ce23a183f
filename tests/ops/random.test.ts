import { describe, expect, it } from "vitest";
import { createRandomStringGenerator } from "@better-auth/utils/random";
import { ID_ALPHABET, randomString, TOKEN_ALPHABET } from "../../lib/random.js";

/**
 * lib/random.ts: the refresh grant's tokens and row ids, drawn from a pool of CSPRNG bytes with
 * the characters better-auth's generators use, every character equally likely.
 */
describe("randomString", () => {
  it("uses exactly the characters of better-auth's generators for tokens and ids", () => {
    const characters = (text: string) => [...new Set(text)].sort().join("");
    // A long draw from better-auth's own generator shows its whole alphabet.
    expect(characters(TOKEN_ALPHABET)).toBe(characters(createRandomStringGenerator("A-Z", "a-z")(20_000)));
    expect(characters(ID_ALPHABET)).toBe(characters(createRandomStringGenerator("a-z", "A-Z", "0-9")(20_000)));
    expect(TOKEN_ALPHABET).toHaveLength(52);
    expect(ID_ALPHABET).toHaveLength(62);
  });

  it("gives strings of the length asked, of the alphabet's characters only, never the same twice", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 5_000; i++) {
      const token = randomString(32, TOKEN_ALPHABET);
      expect(token).toMatch(/^[A-Za-z]{32}$/);
      seen.add(token);
    }
    // 5,000 draws cross the 4 KiB pool's refill many times; none repeats.
    expect(seen.size).toBe(5_000);
    expect(randomString(1, "01")).toMatch(/^[01]$/);
    expect(randomString(0, ID_ALPHABET)).toBe("");
  });

  it("draws every character of the alphabet equally often (no modulo bias)", () => {
    // 62 characters: a plain byte % 62 would give the first 8 characters 5/4 of the others' share.
    const counts = new Map<string, number>();
    const draws = 62 * 4_000;
    for (const c of randomString(draws, ID_ALPHABET)) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect(counts.size).toBe(62);
    for (const [c, n] of counts) expect(Math.abs(n - 4_000), `${c}: ${n}`).toBeLessThan(400);
    const first = [...ID_ALPHABET.slice(0, 8)].reduce((sum, c) => sum + counts.get(c)!, 0) / 8;
    const rest = [...ID_ALPHABET.slice(8)].reduce((sum, c) => sum + counts.get(c)!, 0) / 54;
    expect(first / rest).toBeLessThan(1.05);
  });

  it("refuses an alphabet it cannot draw from uniformly byte by byte", () => {
    expect(() => randomString(4, "a")).toThrow(RangeError);
    expect(() => randomString(4, "x".repeat(257))).toThrow(RangeError);
  });
});
