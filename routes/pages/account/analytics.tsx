import { ANALYTICS_SPANS, loadClientAnalytics, sumCounts, type AnalyticsSpan, type ClientAnalytics } from "../../../plugins/analytics/report.js";
import { listOwnedClients } from "../../../plugins/oauth-store/clients.js";
import { TIERS, type TierId } from "../../../plugins/subscriptions/tiers.js";
import type { PageDeps } from "../page-env.js";
import { BarChart, type ChartSeries } from "./analytics-charts.js";
import { Section } from "./format.js";

/**
 * The account page's analytics section (Pro): a client and a span picked with a plain GET form
 * (`?analytics_client=&analytics_days=`), the totals, four server-drawn charts with their data
 * tables, and the CSV download. Below Pro it says where analytics come from; the counts are
 * kept meanwhile (plugins/analytics), so they show again on a return to Pro.
 */
export interface AnalyticsView {
  tier: TierId;
  clients: Array<{ clientId: string; name: string }>;
  /** The shown client's report; null below Pro or without clients. */
  report: ClientAnalytics | null;
}

const spanOf = (value: string | null): AnalyticsSpan => (ANALYTICS_SPANS as readonly number[]).find((n) => String(n) === value) as AnalyticsSpan | undefined ?? 30;

/** What the section shows; below Pro nothing is read. */
export async function loadAnalyticsSection(deps: PageDeps, userId: string, tier: TierId, search: URLSearchParams): Promise<AnalyticsView> {
  if (tier !== "pro") return { tier, clients: [], report: null };
  const clients = await listOwnedClients(deps.db, userId);
  const chosen = clients.find((c) => c.clientId === search.get("analytics_client")) ?? clients[0];
  const report = chosen ? await loadClientAnalytics(deps.db, chosen.clientId, spanOf(search.get("analytics_days"))) : null;
  return { tier, clients, report };
}

/** Each key of `pick` over the span, sorted: the breakdown's columns. */
const keysOf = (report: ClientAnalytics, pick: "tokens" | "refusals") => Object.keys(report.totals[pick]).sort();

function charts(report: ClientAnalytics): ChartSeries[] {
  return [
    { id: "authorizations", title: "Authorizations", value: (d) => d.authorizations },
    { id: "people", title: "People signing in", value: (d) => d.people },
    { id: "tokens", title: "Tokens issued", value: (d) => sumCounts(d.tokens), breakdown: { keys: keysOf(report, "tokens"), of: (d, k) => d.tokens[k] ?? 0 } },
    { id: "refusals", title: "Refusals", value: (d) => sumCounts(d.refusals), breakdown: { keys: keysOf(report, "refusals"), of: (d, k) => d.refusals[k] ?? 0 } },
  ];
}

function Picker(props: { clients: AnalyticsView["clients"]; report: ClientAnalytics }) {
  return (
    <form method="get" action="/account/plan#analytics" class="row">
      <div>
        <label for="analytics-client">Client</label>
        <select id="analytics-client" name="analytics_client">
          {props.clients.map((c) => (
            <option value={c.clientId} selected={c.clientId === props.report.clientId}>
              {c.name === c.clientId ? c.name : `${c.name} (${c.clientId})`}
            </option>
          ))}
        </select>
      </div>
      <div>
        <label for="analytics-days">Period</label>
        <select id="analytics-days" name="analytics_days">
          {ANALYTICS_SPANS.map((n) => (
            <option value={String(n)} selected={n === props.report.days}>{`Last ${n} days`}</option>
          ))}
        </select>
      </div>
      <div>
        <button type="submit" class="secondary">
          Show
        </button>
      </div>
    </form>
  );
}

export function AnalyticsSection(props: { view: AnalyticsView }) {
  const { tier, clients, report } = props.view;
  if (tier !== "pro") {
    return (
      <Section id="analytics" title="Analytics">
        <p>Analytics of your OAuth clients (sign-ins, people, tokens, refusals) come with the {TIERS.pro.name} plan. Your plan is {TIERS[tier].name}.</p>
      </Section>
    );
  }
  if (!report) {
    return (
      <Section id="analytics" title="Analytics">
        <p>You own no OAuth client yet. Register one, and its sign-ins and tokens are counted here.</p>
      </Section>
    );
  }
  const csv = `/api/clients/${encodeURIComponent(report.clientId)}/analytics.csv?days=${report.days}`;
  return (
    <Section id="analytics" title="Analytics">
      <Picker clients={clients} report={report} />
      <p class="muted">
        {report.from} to {report.to} (UTC). Counts reach this page within a few seconds.
      </p>
      <ul data-totals>
        <li>Authorizations: {report.totals.authorizations}</li>
        <li>Different people signing in: {report.totals.people}</li>
        <li>Tokens issued: {sumCounts(report.totals.tokens)}</li>
        <li>Refusals: {sumCounts(report.totals.refusals)}</li>
        <li>Active grants now: {report.activeGrants}</li>
      </ul>
      {charts(report).map((series) => (
        <BarChart series={series} days={report.daily} />
      ))}
      <p>
        <a href={csv} download>
          Download these figures as CSV
        </a>
      </p>
    </Section>
  );
}
