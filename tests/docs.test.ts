import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

/** The repository documents itself: README.md and docs/ link only to files it holds. */
const root = resolve(import.meta.dirname, "..");
const documents = ["README.md", ...readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];

describe("documentation", () => {
  it("links only to files inside the repository that exist", () => {
    const broken: string[] = [];
    for (const doc of documents) {
      const text = readFileSync(join(root, doc), "utf8");
      for (const [, target] of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue;
        const file = resolve(root, dirname(doc), target!);
        if (relative(root, file).startsWith("..") || !existsSync(file)) broken.push(`${doc} -> ${target}`);
      }
      if (text.includes("../shared/")) broken.push(`${doc} -> ../shared/`);
    }
    expect(broken).toEqual([]);
  });

  it("README links every docs/ page", () => {
    const readme = readFileSync(join(root, "README.md"), "utf8");
    for (const doc of documents.filter((d) => d.startsWith("docs/"))) expect(readme, doc).toContain(`(${doc})`);
  });

  it("docs/configuration.md names every setting of .env.example", () => {
    const reference = readFileSync(join(root, "docs/configuration.md"), "utf8");
    const settings = [...readFileSync(join(root, ".env.example"), "utf8").matchAll(/^([A-Z][A-Z0-9_]*)=/gm)].map(([, key]) => key!.replace(/^OIDC_1_/, "OIDC_<N>_"));
    expect(settings.length).toBeGreaterThan(50);
    expect(settings.filter((key) => !reference.includes(`\`${key}\``))).toEqual([]);
  });
});
