import type { AnalyticsDay } from "../../../plugins/analytics/report.js";

/**
 * Bar charts drawn on the server as inline SVG (no script, no CDN): one bar per day. The SVG is
 * an image whose name says what it shows and its figures in a sentence; the numbers themselves
 * are in the data table after it, which a screen reader (or anyone) opens.
 */
export interface ChartSeries {
  id: string;
  title: string;
  /** The value of each day. */
  value: (day: AnalyticsDay) => number;
  /** Columns the data table adds after the value: a breakdown by grant type or error code. */
  breakdown?: { keys: string[]; of: (day: AnalyticsDay, key: string) => number };
}

const WIDTH = 640;
const HEIGHT = 160;
const AXIS = 28;
const TOP = 12;

/** The bars of one chart, scaled to the highest day (at least 1, so an empty span is a flat line). */
function Bars(props: { days: AnalyticsDay[]; values: number[] }) {
  const max = Math.max(1, ...props.values);
  const slot = (WIDTH - AXIS) / props.days.length;
  const bar = Math.max(1, slot * 0.7);
  const plot = HEIGHT - TOP - 18;
  return (
    <>
      <line x1={AXIS} y1={TOP + plot} x2={WIDTH} y2={TOP + plot} stroke="currentColor" stroke-width="1" />
      <text x={AXIS - 4} y={TOP + 4} font-size="11" text-anchor="end" fill="currentColor">
        {max}
      </text>
      <text x={AXIS - 4} y={TOP + plot} font-size="11" text-anchor="end" fill="currentColor">
        0
      </text>
      {props.values.map((n, i) => {
        const h = (n / max) * plot;
        return <rect x={(AXIS + i * slot + (slot - bar) / 2).toFixed(1)} y={(TOP + plot - h).toFixed(1)} width={bar.toFixed(1)} height={h.toFixed(1)} fill="currentColor" />;
      })}
      <text x={AXIS} y={HEIGHT - 2} font-size="11" fill="currentColor">
        {props.days[0]?.date}
      </text>
      <text x={WIDTH} y={HEIGHT - 2} font-size="11" text-anchor="end" fill="currentColor">
        {props.days.at(-1)?.date}
      </text>
    </>
  );
}

/** One chart and its data table. */
export function BarChart(props: { series: ChartSeries; days: AnalyticsDay[] }) {
  const { series, days } = props;
  const values = days.map(series.value);
  const total = values.reduce((a, b) => a + b, 0);
  const peak = Math.max(0, ...values);
  const peakDay = peak ? days[values.indexOf(peak)]!.date : null;
  const summary = `${series.title}, ${days[0]?.date} to ${days.at(-1)?.date}: ${total} in all${peakDay ? `, at most ${peak} on ${peakDay}` : ""}.`;
  const keys = series.breakdown?.keys ?? [];
  return (
    <figure id={`chart-${series.id}`} data-chart={series.id}>
      <figcaption>
        <h3>{series.title}</h3>
      </figcaption>
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} width="100%" role="img" aria-labelledby={`chart-${series.id}-name`} preserveAspectRatio="none">
        <title id={`chart-${series.id}-name`}>{summary}</title>
        <Bars days={days} values={values} />
      </svg>
      <details>
        <summary>Data table: {series.title.toLowerCase()}</summary>
        <table data-table={series.id}>
          <caption>{summary}</caption>
          <thead>
            <tr>
              <th scope="col">Day (UTC)</th>
              <th scope="col">{series.title}</th>
              {keys.map((k) => (
                <th scope="col">{k}</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {days.map((day, i) => (
              <tr>
                <th scope="row">{day.date}</th>
                <td>{values[i]}</td>
                {keys.map((k) => (
                  <td>{series.breakdown!.of(day, k)}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
