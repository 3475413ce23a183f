import { describe, expect, it } from "vitest";
import { summarize } from "../../scripts/bench.js";

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
});
