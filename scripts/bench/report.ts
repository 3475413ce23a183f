/** One measured run of one route on one server. */
export interface Row {
  route: string;
  /** Which server answered: ours, or node-oidc-provider (--reference). @default "ours" */
  server?: "ours" | "reference";
  round?: number;
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  mismatches: number;
  /** Server CPU per request: a figure that other load on the machine disturbs less than req/s. */
  cpuMsPerReq: number | undefined;
  valid: boolean;
}

/** The speed goals of issue 2 (req/s on this 2-core machine, SQLite, load generator on the box). */
export const GOALS: Record<string, number> = { discovery: 5000, jwks: 5000, "get-session": 2000, introspect: 1000, refresh: 500 };

/**
 * The goals against node-oidc-provider in the same run (ours / theirs); get-session has no
 * counterpart there and is measured against our own discovery instead.
 */
export const RATIO_GOALS: Record<string, number> = { discovery: 1.5, jwks: 1.5, introspect: 1.5, refresh: 1.0, "get-session": 0.5 };

export const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

export type Summary = ReturnType<typeof summarize>[number];

/** One line per route over its rounds: medians of the rates, sums of the counts. */
export function summarize(rows: Row[]) {
  const routes = [...new Set(rows.map((r) => r.route))];
  return routes.map((route) => {
    const mine = rows.filter((r) => r.route === route);
    const cpu = mine.map((r) => r.cpuMsPerReq).filter((v): v is number => v !== undefined);
    return {
      route,
      rps: Math.round(median(mine.map((r) => r.rps))),
      min: Math.min(...mine.map((r) => r.rps)),
      max: Math.max(...mine.map((r) => r.rps)),
      goal: GOALS[route],
      p50: median(mine.map((r) => r.p50)),
      p99: median(mine.map((r) => r.p99)),
      requests: mine.reduce((n, r) => n + r.requests, 0),
      non2xx: mine.reduce((n, r) => n + r.non2xx, 0),
      errors: mine.reduce((n, r) => n + r.errors, 0),
      timeouts: mine.reduce((n, r) => n + r.timeouts, 0),
      mismatches: mine.reduce((n, r) => n + r.mismatches, 0),
      cpuMsPerReq: cpu.length ? median(cpu) : undefined,
      valid: mine.every((r) => r.valid),
    };
  });
}

export interface Ratio {
  route: string;
  /** Median over rounds of (our req/s / the reference's req/s in the same round). */
  ratio: number;
  min: number;
  max: number;
  /** What the ratio is against: node-oidc-provider's same route, or our own discovery (get-session). */
  against: string;
  goal: number | undefined;
  valid: boolean;
}

/**
 * Ratios per route from rounds measured side by side: each round's ours over the reference's
 * (get-session over our own discovery in that round), then the median over rounds, since the
 * machine's speed drifts between rounds more than within one.
 */
export function ratios(rows: Row[]): Ratio[] {
  const ours = rows.filter((r) => (r.server ?? "ours") === "ours");
  const theirs = rows.filter((r) => r.server === "reference");
  const out: Ratio[] = [];
  for (const route of [...new Set(ours.map((r) => r.route))]) {
    const againstOwn = route === "get-session";
    const base = againstOwn ? ours.filter((r) => r.route === "discovery") : theirs.filter((r) => r.route === route);
    const pairs = ours
      .filter((r) => r.route === route)
      .map((r) => ({ r, b: base.find((x) => x.round === r.round) }))
      .filter((p): p is { r: Row; b: Row } => p.b !== undefined && p.b.rps > 0);
    if (!pairs.length) continue;
    const each = pairs.map(({ r, b }) => r.rps / b.rps);
    out.push({
      route,
      ratio: median(each),
      min: Math.min(...each),
      max: Math.max(...each),
      against: againstOwn ? "our discovery" : "node-oidc-provider",
      goal: RATIO_GOALS[route],
      valid: pairs.every(({ r, b }) => r.valid && b.valid),
    });
  }
  return out;
}

/** A plain-text table: the first column left-aligned, the rest right-aligned. */
export function table(header: string[], lines: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const fmt = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
  return `${fmt(header)}\n${lines.map(fmt).join("\n")}\n`;
}
