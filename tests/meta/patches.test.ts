import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

/**
 * The dependency patches are governed by patches/README.md: one row per hunk, and a
 * `/* idp-patch: <id> *\/` marker in every security and spec hunk. This reads the installed
 * files, not the patch files alone: `patch-package` skipped (an install without scripts, a
 * failed apply outside CI) leaves node_modules without the fixes, and this goes red.
 */

const PATCHES = "patches";
const SECURITY_OR_SPEC = new Set(["security", "spec"]);
const CATEGORIES = new Set([...SECURITY_OR_SPEC, "robustness", "speed"]);

interface HunkRow {
  id: string;
  pkg: string;
  file: string;
  category: string;
}

/** The rows of the README's "Hunks" table. */
function readIndex(): HunkRow[] {
  const text = readFileSync(`${PATCHES}/README.md`, "utf8");
  const section = text.split(/^## Hunks$/m)[1]?.split(/^## /m)[0] ?? "";
  return section
    .split("\n")
    .filter((line) => line.startsWith("|") && !/^\|\s*(Id\s*\||-)/.test(line))
    .map((line) => {
      const [id, pkg, file, category] = line.split("|").slice(1, 5).map((cell) => cell.trim());
      return { id: id!, pkg: pkg!, file: file!, category: category! };
    });
}

/** `node_modules/@scope/name/dist/x.mjs` -> package and file inside it. */
function splitPath(path: string): { pkg: string; file: string } {
  const match = /^node_modules\/((?:@[^/]+\/)?[^/]+)\/(.+)$/.exec(path);
  if (!match) throw new Error(`not a node_modules path: ${path}`);
  return { pkg: match[1]!, file: match[2]! };
}

/** Hunks per patched file, the markers the patch adds, and the markers of each hunk in file order. */
function readPatches(): { hunks: Map<string, number>; markers: Map<string, string>; hunkMarkers: Map<string, string[][]> } {
  const hunks = new Map<string, number>();
  const markers = new Map<string, string>();
  const hunkMarkers = new Map<string, string[][]>();
  for (const name of readdirSync(PATCHES).filter((f) => f.endsWith(".patch"))) {
    let current = "";
    for (const line of readFileSync(`${PATCHES}/${name}`, "utf8").split("\n")) {
      const diff = /^diff --git a\/(\S+) b\//.exec(line);
      if (diff) {
        const { pkg, file } = splitPath(diff[1]!);
        current = `${pkg} ${file}`;
      } else if (line.startsWith("@@ ")) {
        hunks.set(current, (hunks.get(current) ?? 0) + 1);
        hunkMarkers.set(current, [...(hunkMarkers.get(current) ?? []), []]);
      } else if (line.startsWith("+")) {
        for (const [, id] of line.matchAll(/\/\* idp-patch: ([\w-]+) \*\//g)) {
          markers.set(id!, current);
          hunkMarkers.get(current)?.at(-1)?.push(id!);
        }
      }
    }
  }
  return { hunks, markers, hunkMarkers };
}

const rows = readIndex();
const { hunks, markers, hunkMarkers } = readPatches();

describe("dependency patches (patches/README.md)", () => {
  it("lists every hunk of every patch file once, with a known category and a unique id", () => {
    const listed = new Map<string, number>();
    for (const row of rows) listed.set(`${row.pkg} ${row.file}`, (listed.get(`${row.pkg} ${row.file}`) ?? 0) + 1);
    expect(Object.fromEntries(listed)).toEqual(Object.fromEntries(hunks));
    expect(rows.filter((row) => !CATEGORIES.has(row.category)).map((row) => row.id)).toEqual([]);
    expect(new Set(rows.map((row) => row.id)).size).toBe(rows.length);
  });

  it("marks every security and spec hunk in its patch file, and lists every marker", () => {
    const marked = rows.filter((row) => SECURITY_OR_SPEC.has(row.category));
    expect(marked.length).toBeGreaterThan(0);
    expect(Object.fromEntries(marked.map((row) => [row.id, `${row.pkg} ${row.file}`]))).toEqual(Object.fromEntries(markers));
  });

  it("lists each file's hunks in patch order: a marked row's marker is in the hunk at its position", () => {
    const position = new Map<string, number>();
    const misplaced = rows
      .map((row) => {
        const key = `${row.pkg} ${row.file}`;
        const index = position.get(key) ?? 0;
        position.set(key, index + 1);
        return { row, found: hunkMarkers.get(key)?.[index] ?? [] };
      })
      .filter(({ row, found }) => SECURITY_OR_SPEC.has(row.category) !== found.includes(row.id) || (!SECURITY_OR_SPEC.has(row.category) && found.length > 0))
      .map(({ row }) => row.id);
    expect(misplaced).toEqual([]);
  });

  it("finds every security and spec marker in the installed package files", () => {
    const missing = rows
      .filter((row) => SECURITY_OR_SPEC.has(row.category))
      .filter((row) => !readFileSync(`node_modules/${row.pkg}/${row.file}`, "utf8").includes(`/* idp-patch: ${row.id} */`))
      .map((row) => `${row.id} (node_modules/${row.pkg}/${row.file})`);
    expect(missing, "patch-package did not apply these hunks: run `npx patch-package`").toEqual([]);
  });

  it("fails the install when a patch does not apply (postinstall --error-on-fail)", () => {
    const pkg = JSON.parse(readFileSync("package.json", "utf8")) as { scripts: Record<string, string> };
    expect(pkg.scripts.postinstall).toMatch(/^patch-package\b.*\s--error-on-fail\b/);
  });
});
