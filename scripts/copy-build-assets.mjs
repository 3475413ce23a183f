// After `tsc -p tsconfig.build.json`: the files the compiled server reads at run time besides
// its own JavaScript, copied to the same relative places under dist/: the schema migrations
// (lib/schema-files.ts reads schema/<dialect>/*.sql) and the browser scripts the pages bundle
// with esbuild on first request (routes/pages/assets.ts bundles routes/pages/client/*.ts).
import { cpSync, existsSync, readdirSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = resolve(root, process.argv[2] ?? "dist");
const wanted = [
  { dir: "schema", keep: (name) => name.endsWith(".sql") },
  { dir: "routes/pages/client", keep: (name) => /\.(ts|tsx|css)$/.test(name) },
];

let copied = 0;
for (const { dir, keep } of wanted) {
  const from = join(root, dir);
  if (!existsSync(from)) continue;
  for (const entry of readdirSync(from, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !keep(entry.name)) continue;
    const source = join(entry.parentPath ?? entry.path, entry.name);
    cpSync(source, join(out, relative(root, source)));
    copied++;
  }
}
console.log(`build: ${copied} run-time files copied to ${relative(root, out) || "."}/`);
