import { describe, expect, it } from "vitest";
import { ratios, summarize } from "../../scripts/bench.js";
import { FLOOR, recordedRatios, shortfalls } from "../../scripts/bench/guard.js";

const row = (route: string, rps: number, extra: Partial<Parameters<typeof summarize>[0][number]> = {}) => ({
  route,
  rps,
  p50: 1,
  p99: 5,
  requests: rps * 8,
  non2xx: 0,
  errors: 0,
  timeouts: 0,
  mismatches: 0,
  cpuMsPerReq: 1000 / rps,
  valid: true,
  ...extra,
});

describe("npm run bench: summarising rounds", () => {
  it("reports the median rate, the range and the goal per route, counts summed", () => {
    const [session, refresh, userinfo] = summarize([
      row("get-session", 1900),
      row("refresh", 480),
      row("userinfo", 900),
      row("get-session", 2300),
      row("refresh", 520),
      row("userinfo", 950),
      row("get-session", 2100),
      row("refresh", 510),
      row("userinfo", 1000),
    ]);
    expect(session).toMatchObject({ route: "get-session", rps: 2100, min: 1900, max: 2300, goal: 2000, requests: (1900 + 2300 + 2100) * 8, valid: true });
    expect(refresh).toMatchObject({ rps: 510, goal: 500 });
    expect(userinfo!.goal).toBeUndefined();
    expect(session!.cpuMsPerReq).toBeCloseTo(1000 / 2100, 6);
  });

  it("a failure in any round makes the route invalid and is counted", () => {
    const [r] = summarize([row("introspect", 1200), row("introspect", 900, { non2xx: 3, valid: false })]);
    expect(r).toMatchObject({ rps: 1050, non2xx: 3, valid: false });
  });

  it("--reference: each round's ours over theirs, the median over rounds; get-session against our discovery", () => {
    const both = (round: number, route: string, ours: number, theirs: number) => [
      row(route, ours, { server: "ours", round }),
      row(route, theirs, { server: "reference", round }),
    ];
    const result = ratios([
      ...both(0, "discovery", 4000, 2000),
      ...both(0, "introspect", 1000, 4000),
      row("get-session", 1000, { server: "ours", round: 0 }),
      ...both(1, "discovery", 3000, 3000),
      ...both(1, "introspect", 2000, 4000),
      row("get-session", 1500, { server: "ours", round: 1 }),
      ...both(2, "discovery", 6000, 2000),
      ...both(2, "introspect", 3000, 2000, ),
      row("get-session", 1000, { server: "ours", round: 2 }),
    ]);
    expect(result.find((r) => r.route === "discovery")).toMatchObject({ ratio: 2, min: 1, max: 3, against: "node-oidc-provider", goal: 1.5 });
    expect(result.find((r) => r.route === "introspect")).toMatchObject({ ratio: 0.5, min: 0.25, max: 1.5 });
    expect(result.find((r) => r.route === "get-session")).toMatchObject({ ratio: 0.25, against: "our discovery", goal: 0.5 });
  });

  it("the speed guard reads the README's SQLite ratios and fails a route below its floor, or one not a checked 2xx", () => {
    const readme = [
      "# x",
      "## Benchmarks",
      "| route | ours | ratio (SQLite) | guard ratio (SQLite) |",
      "|---|---|---|---|",
      "| discovery | 9,000 | 2.5x | 2.0x |",
      "| introspect | 3,000 | 1.5x | 1.2x |",
      "## Next",
    ].join("\n");
    const recorded = recordedRatios(readme);
    expect([...recorded]).toEqual([["discovery", 2], ["introspect", 1.2]]);
    expect(shortfalls([{ route: "discovery", ratio: 2 * FLOOR + 0.01, valid: true }, { route: "introspect", ratio: 1.1, valid: true }], recorded)).toEqual([]);
    expect(shortfalls([{ route: "discovery", ratio: 2, valid: true }, { route: "introspect", ratio: 0.6, valid: true }], recorded)[0]).toMatch(/^introspect: 0.60x/);
    expect(shortfalls([{ route: "discovery", ratio: 2, valid: false }], recorded)).toEqual(["discovery: a counted answer was not a checked 2xx", "introspect: not measured"]);
  });
});
