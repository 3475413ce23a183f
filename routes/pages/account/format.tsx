import type { Child } from "hono/jsx";
/** Small renderers the account sections share. */

/** A date as a machine-readable <time>, shown in UTC to the minute (server-rendered, no script). */
export function When(props: { at: Date | null | undefined }) {
  if (!props.at || Number.isNaN(props.at.getTime())) return <span class="muted">unknown</span>;
  const iso = props.at.toISOString();
  return <time datetime={iso}>{`${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`}</time>;
}

const BROWSERS: Array<[RegExp, string]> = [
  [/Edg\//, "Edge"],
  [/OPR\//, "Opera"],
  [/Firefox\//, "Firefox"],
  [/HeadlessChrome\//, "Headless Chrome"],
  [/Chrom(e|ium)\//, "Chrome"],
  [/Safari\//, "Safari"],
];
const SYSTEMS: Array<[RegExp, string]> = [
  [/Android/, "Android"],
  [/iPhone|iPad|iPod/, "iOS"],
  [/Mac OS X|Macintosh/, "macOS"],
  [/Windows/, "Windows"],
  [/CrOS/, "ChromeOS"],
  [/Linux/, "Linux"],
];

/** "Firefox on Linux" from a User-Agent header; anything unrecognised is named as an app or unknown. */
export function describeUserAgent(ua: string | null | undefined): string {
  if (!ua) return "Unknown device";
  const browser = BROWSERS.find(([re]) => re.test(ua))?.[1];
  const system = SYSTEMS.find(([re]) => re.test(ua))?.[1];
  if (browser && system) return `${browser} on ${system}`;
  if (browser || system) return (browser ?? system)!;
  return ua.length > 60 ? `${ua.slice(0, 57)}…` : ua;
}

/** A section of the account page: a heading the section is labelled by, and its body. */
export function Section(props: { id: string; title: string; children?: Child }) {
  return (
    <section id={props.id} class="card" aria-labelledby={`${props.id}-title`}>
      <h2 id={`${props.id}-title`}>{props.title}</h2>
      {props.children}
    </section>
  );
}
