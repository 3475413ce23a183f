import { describe, expect, it } from "vitest";
import { MAX_RSS_GROWTH, P99_SAMPLES, quantile, rssGrowth, thinTails, verdict, type RouteFigures, type RssSample, type SoakResult } from "../../scripts/soak.js";

/** `npm run bench:soak` decides pass or fail from its figures alone: these check that decision. */

const MB = 1024 * 1024;
const route = (name: string, extra: Partial<RouteFigures> = {}): RouteFigures => ({ route: name, requests: 100, measured: 100, p50: 5, p99: 20, errors: 0, failures: {}, ...extra });
/** One sample a second for `seconds`, from `start` MB growing linearly to `end` MB. */
const rss = (seconds: number, start: number, end: number): RssSample[] =>
  Array.from({ length: seconds }, (_, i) => ({ at: i + 1, bytes: (start + ((end - start) * i) / (seconds - 1)) * MB }));
const result = (extra: Partial<SoakResult> = {}): SoakResult => ({ seconds: 60, rate: 20, warmup: 10, routes: [route("userinfo"), route("refresh")], rss: rss(60, 200, 205), ...extra });

describe("npm run bench:soak: the verdict", () => {
  it("passes a run with no failed request and flat memory", () => {
    expect(verdict(result())).toEqual({ ok: true, reasons: [] });
  });

  it("fails on a single failed request, and says which route and why", () => {
    const judged = verdict(result({ routes: [route("userinfo"), route("refresh", { errors: 1, failures: { "429": 1 } })] }));
    expect(judged.ok).toBe(false);
    expect(judged.reasons).toEqual(["refresh: 1 failed (429 ×1); 100 requests sent"]);
  });

  it("fails when RSS grows by 10% or more after warm-up, not below", () => {
    // Growth is judged after warm-up: a steep climb during warm-up alone does not count.
    const warmingUp = [...rss(10, 100, 200), ...rss(50, 200, 210).map((s) => ({ ...s, at: s.at + 10 }))];
    expect(verdict(result({ rss: warmingUp })).ok).toBe(true);
    const growing = rss(60, 200, 260);
    const judged = verdict(result({ rss: growing }));
    expect(judged.ok).toBe(false);
    expect(judged.reasons[0]).toMatch(/^RSS grew \d+\.\d% after warm-up/);
    const growth = rssGrowth(growing, 10)!.growth;
    expect(growth).toBeGreaterThanOrEqual(MAX_RSS_GROWTH);
    // Just under the limit passes; exactly the limit fails.
    const flatThen = (last: number): RssSample[] => [...rss(60, 200, 200).slice(0, 55), ...Array.from({ length: 5 }, (_, i) => ({ at: 56 + i, bytes: last * MB }))];
    expect(verdict(result({ rss: flatThen(219.9) })).ok).toBe(true);
    expect(verdict(result({ rss: flatThen(220) })).ok).toBe(false);
  });

  it("one high sample does not decide: medians of the first and last five after warm-up", () => {
    const spiky = rss(60, 200, 200).map((s) => (s.at === 60 ? { ...s, bytes: 400 * MB } : s));
    expect(rssGrowth(spiky, 10)).toEqual({ baseline: 200 * MB, end: 200 * MB, growth: 0 });
    expect(verdict(result({ rss: spiky })).ok).toBe(true);
  });

  it("fails a run that sent nothing or could not sample memory", () => {
    expect(verdict(result({ routes: [] })).reasons).toContain("no request was sent");
    expect(verdict(result({ rss: [] })).reasons).toContain("too few RSS samples after warm-up to judge memory");
  });

  it("says which routes' p99 is only their slowest request (fewer than 100 measured)", () => {
    // At 99 values the nearest rank of p99 is the largest; at 100 it is the second largest.
    const values = (n: number) => Array.from({ length: n }, (_, i) => i + 1);
    expect(quantile(values(P99_SAMPLES - 1), 0.99)).toBe(P99_SAMPLES - 1);
    expect(quantile(values(P99_SAMPLES), 0.99)).toBe(P99_SAMPLES - 1);
    const lines = thinTails([route("userinfo", { measured: P99_SAMPLES }), route("backup sync", { measured: 28 }), route("unmeasured", { measured: 0, p50: null, p99: null })]);
    expect(lines).toEqual(["backup sync: p99 of 28 measured requests is the slowest of them (nearest rank; 100 or more are needed for it to be anything else)"]);
    expect(thinTails([route("one", { measured: 1 })])[0]).toMatch(/^one: p99 of 1 measured request is/);
  });

  it("quantile: nearest rank", () => {
    const values = Array.from({ length: 100 }, (_, i) => 100 - i);
    expect(quantile(values, 0.5)).toBe(50);
    expect(quantile(values, 0.99)).toBe(99);
    expect(quantile([7], 0.99)).toBe(7);
    expect(quantile([], 0.5)).toBeNull();
  });
});
