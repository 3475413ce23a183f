import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Page } from "playwright-core";

/**
 * axe-core's script when it can be resolved from here, else null (it is not a dependency of the
 * project yet: a test that needs it is skipped, visibly, with `it.skipIf(!axeSource)`).
 */
export const axeSource: string | null = (() => {
  try {
    return readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
  } catch {
    return null;
  }
})();

/** The WCAG 2.0-2.2 A and AA rules axe checks. */
const WCAG_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"];

/**
 * The ids of the axe rules `page` breaks inside the `include` selectors. The page's context must
 * run scripts and bypass the page's Content-Security-Policy (axe is injected inline).
 */
export async function axeViolations(page: Page, include: string[]): Promise<string[]> {
  if (!axeSource) throw new Error("axe-core is not installed");
  await page.addScriptTag({ content: axeSource });
  return page.evaluate(
    async ({ include, tags }) => {
      const axe = (globalThis as unknown as { axe: { run: (ctx: unknown, opts: unknown) => Promise<{ violations: Array<{ id: string }> }> } }).axe;
      const result = await axe.run({ include: include.map((s) => [s]) }, { runOnly: { type: "tag", values: tags } });
      return result.violations.map((v) => v.id);
    },
    { include, tags: WCAG_AA },
  );
}
