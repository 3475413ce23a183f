import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

/** The repository documents itself: README.md and docs/ link only to files it holds. */
const root = resolve(import.meta.dirname, "..", "..");
const documents = ["README.md", ...readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];

/** Markdown outside fenced code blocks (a `](` or `#` inside one is not a link or a heading). */
function prose(text: string): string {
  return text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
}

/**
 * The anchors GitHub gives a file's headings (github-slugger's rules): the heading's text
 * (links reduced to their text, inline code to its content), lower case, every character
 * that is not a letter, digit, space, `-` or `_` dropped, each space a `-`; a repeated
 * slug gets `-1`, `-2`, ... in order.
 */
function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const [, heading] of prose(markdown).matchAll(/^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$/gm)) {
    const text = heading!.replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1").replace(/<[^>]+>/g, "");
    const base = text.toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "").replace(/ /g, "-");
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** Every inline link target of a document: [text](target). */
function links(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)].map(([, target]) => target!);
}

describe("documentation", () => {
  it("GitHub's heading anchors (the slug rules the link check uses)", () => {
    const doc = "# Identity provider\n## Resource indicators (RFC 8707): tokens for other resource servers\n### `/api/reference` and [Metrics](x.md)\n## Limits\n## Limits\n```\n# not a heading\n```\n## What exists today, and what does not\n";
    expect([...headingAnchors(doc)]).toEqual([
      "identity-provider",
      "resource-indicators-rfc-8707-tokens-for-other-resource-servers",
      "apireference-and-metrics",
      "limits",
      "limits-1",
      "what-exists-today-and-what-does-not",
    ]);
  });

  it("links only to files inside the repository that exist, and to headings they have", () => {
    const broken: string[] = [];
    for (const doc of documents) {
      const text = readFileSync(join(root, doc), "utf8");
      for (const target of links(text)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) {
          // Outside the repository only public web pages: never a local or private host, nor a file.
          if (!/^https?:\/\/(?!localhost\b|127\.|0\.0\.0\.0|\[::1\]|10\.|192\.168\.)[^/\s]+/i.test(target)) broken.push(`${doc} -> ${target} (not a public URL)`);
          continue;
        }
        const hash = target.indexOf("#");
        const path = decodeURIComponent(hash === -1 ? target : target.slice(0, hash));
        const anchor = hash === -1 ? null : decodeURIComponent(target.slice(hash + 1));
        if (path.startsWith("/")) {
          broken.push(`${doc} -> ${target} (an absolute path)`);
          continue;
        }
        const file = path === "" ? join(root, doc) : resolve(root, dirname(doc), path);
        const inside = relative(root, file);
        if (inside.startsWith("..") || inside.split(/[\\/]/)[0] === "node_modules" || !existsSync(file)) {
          broken.push(`${doc} -> ${target} (no such file in the repository)`);
          continue;
        }
        if (anchor !== null) {
          if (statSync(file).isDirectory() || !file.endsWith(".md")) broken.push(`${doc} -> ${target} (an anchor into a file without headings)`);
          else if (!headingAnchors(readFileSync(file, "utf8")).has(anchor)) broken.push(`${doc} -> ${target} (no such heading)`);
        }
      }
      if (text.includes("../../shared")) broken.push(`${doc} -> ../shared`);
    }
    expect(broken).toEqual([]);
  });

  it("README.md is a front page: at most 220 lines", () => {
    const lines = readFileSync(join(root, "README.md"), "utf8").split("\n");
    if (lines.at(-1) === "") lines.pop();
    expect(lines.length).toBeLessThanOrEqual(220);
  });

  it("README links every docs/ page", () => {
    const readme = readFileSync(join(root, "README.md"), "utf8");
    for (const doc of documents.filter((d) => d.startsWith("docs/"))) expect(readme, doc).toContain(`(${doc})`);
  });
});
