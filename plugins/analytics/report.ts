import type { Kysely } from "kysely";
import type { Database } from "../../lib/db/tables.js";
import { countActiveGrants } from "../oauth-store/grants.js";
import { utcDay } from "./counter.js";
import { countDailyPeople, listDailyCounts } from "./store.js";

/** The spans a report covers, in days (GET /api/clients/{clientId}/analytics?days=). */
export const ANALYTICS_SPANS = [7, 30, 90] as const;
export type AnalyticsSpan = (typeof ANALYTICS_SPANS)[number];

export interface AnalyticsDay {
  date: string;
  authorizations: number;
  /** Different people who signed in to the client that day (exact: a set per day). */
  people: number;
  /** Tokens issued, by grant type. */
  tokens: Record<string, number>;
  /** Refusals, by RFC 6749 error code. */
  refusals: Record<string, number>;
}

export interface ClientAnalytics {
  clientId: string;
  days: AnalyticsSpan;
  /** First and last UTC day covered (the last is today). */
  from: string;
  to: string;
  totals: {
    authorizations: number;
    /** Different people over the whole span. */
    people: number;
    tokens: Record<string, number>;
    refusals: Record<string, number>;
  };
  /** People holding a grant of the client now (a consent or a live refresh token). */
  activeGrants: number;
  /** One entry per day, oldest first, days without activity included. */
  daily: AnalyticsDay[];
}

const DAY_MS = 24 * 60 * 60 * 1000;
const add = (into: Record<string, number>, key: string, n: number) => {
  into[key] = (into[key] ?? 0) + n;
};

/** The client's analytics over the last `days` UTC days, today included (counts not yet flushed are not in it). */
export async function loadClientAnalytics(db: Kysely<Database>, clientId: string, days: AnalyticsSpan, now = new Date()): Promise<ClientAnalytics> {
  const to = utcDay(now);
  const from = utcDay(new Date(now.getTime() - (days - 1) * DAY_MS));
  const [counts, people, activeGrants] = await Promise.all([listDailyCounts(db, clientId, from), countDailyPeople(db, clientId, from), countActiveGrants(db, clientId, now)]);
  const daily = new Map<string, AnalyticsDay>();
  for (let i = days - 1; i >= 0; i--) {
    const date = utcDay(new Date(now.getTime() - i * DAY_MS));
    daily.set(date, { date, authorizations: 0, people: people.perDay.get(date) ?? 0, tokens: {}, refusals: {} });
  }
  const totals: ClientAnalytics["totals"] = { authorizations: 0, people: people.total, tokens: {}, refusals: {} };
  for (const row of counts) {
    const day = daily.get(row.day);
    if (!day) continue;
    if (row.metric === "authorization") {
      day.authorizations += row.count;
      totals.authorizations += row.count;
    } else if (row.metric === "token") {
      add(day.tokens, row.key, row.count);
      add(totals.tokens, row.key, row.count);
    } else if (row.metric === "refusal") {
      add(day.refusals, row.key, row.count);
      add(totals.refusals, row.key, row.count);
    }
  }
  return { clientId, days, from, to, totals, activeGrants, daily: [...daily.values()] };
}

const sum = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);
export { sum as sumCounts };

/** RFC 4180 field: quoted when it holds a comma, quote or line break; a leading =, +, - or @ is defused (CSV injection). */
function csvField(value: string | number): string {
  let text = String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * The report as CSV (RFC 4180), one row per day and measure: `date,metric,key,count`, with
 * metric `authorizations`, `people`, `tokens` (key: grant type) or `refusals` (key: error
 * code), and a last row `active_grants` for today.
 */
export function analyticsCsv(report: ClientAnalytics): string {
  const rows: Array<Array<string | number>> = [["date", "metric", "key", "count"]];
  for (const day of report.daily) {
    rows.push([day.date, "authorizations", "", day.authorizations], [day.date, "people", "", day.people]);
    for (const [key, n] of Object.entries(day.tokens).sort()) rows.push([day.date, "tokens", key, n]);
    for (const [key, n] of Object.entries(day.refusals).sort()) rows.push([day.date, "refusals", key, n]);
  }
  rows.push([report.to, "active_grants", "", report.activeGrants]);
  return rows.map((r) => r.map(csvField).join(",")).join("\r\n") + "\r\n";
}
