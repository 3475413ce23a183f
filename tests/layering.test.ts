import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * lib/ holds the shared pieces every layer builds on: it must not reach up into plugins/,
 * routes/ or auth.config.ts (which import lib/), or the layers stop being layers.
 */
describe("layering", () => {
  it("no module under lib/ imports from plugins/, routes/ or auth.config.ts", () => {
    const dir = join(import.meta.dirname, "..", "lib");
    const upward: string[] = [];
    for (const file of readdirSync(dir).filter((f) => /\.tsx?$/.test(f))) {
      const source = readFileSync(join(dir, file), "utf8");
      for (const [, target] of source.matchAll(/\bfrom\s+["']([^"']+)["']/g)) {
        if (/^\.\.\/(plugins|routes)\/|^\.\.\/auth\.config(\.js)?$/.test(target!)) upward.push(`lib/${file} -> ${target}`);
      }
    }
    expect(upward).toEqual([]);
  });
});
