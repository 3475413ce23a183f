import axe from "axe-core";
import type { Page } from "playwright-core";

/**
 * axe-core's findings on the page as it stands: every rule axe runs by default (WCAG 2.x A and
 * AA, and its best practices), as "rule: target" lines so a failure says what and where. The
 * engine goes in through the DevTools protocol (page.evaluate), not a <script> tag, so the
 * page's own Content-Security-Policy stays as it is.
 */
export async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(axe.source);
  const found = await page.evaluate(async () => {
    const run = (window as unknown as { axe: typeof axe }).axe.run;
    const results = await run(document, { resultTypes: ["violations"] });
    return results.violations.flatMap((v) => v.nodes.map((n) => `${v.id}: ${n.target.join(" ")}`));
  });
  return found;
}
