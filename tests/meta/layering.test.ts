import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * The floors of the house, lowest first: a module imports only from its own floor or below.
 * lib/ holds the shared pieces every layer builds on; plugins/ are better-auth plugins;
 * collaborators.ts builds what plugins and routes share; auth.config.ts is the one betterAuth()
 * call; routes/ are the Hono sub-apps and pages; openapi/ describes (and serves) them; app.ts
 * mounts everything; server.ts composes; scripts/ are one-shot CLIs over all of it.
 */
const FLOORS: ReadonlyArray<readonly string[]> = [
  ["lib/"],
  ["plugins/"],
  ["collaborators.ts"],
  ["auth.config.ts"],
  ["routes/", "schema/"],
  ["openapi/"],
  ["app.ts"],
  ["server.ts"],
  ["scripts/"],
];

const ROOT = join(import.meta.dirname, "..", "..");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(name) && !name.endsWith(".d.ts") ? [path] : [];
  });
}

function floorOf(file: string): number {
  return FLOORS.findIndex((floor) => floor.some((entry) => (entry.endsWith("/") ? file.startsWith(entry) : file === entry)));
}

/** Every module of the house (tests aside) with the modules of the house it imports. */
function importGraph(): Map<string, string[]> {
  const files = [
    ...FLOORS.flat().flatMap((entry) => (entry.endsWith("/") ? sourceFiles(join(ROOT, entry)) : [join(ROOT, entry)])),
  ].filter((file) => existsSync(file));
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const source = readFileSync(file, "utf8");
    const targets: string[] = [];
    for (const [, spec] of source.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)["'](\.{1,2}\/[^"']+)["']/g)) {
      const base = resolve(dirname(file), spec!);
      const candidates = [base.replace(/\.js$/, ".ts"), base.replace(/\.js$/, ".tsx"), base, `${base}.ts`, join(base, "index.ts")];
      const hit = candidates.find((c) => existsSync(c) && statSync(c).isFile());
      if (hit) targets.push(relative(ROOT, hit));
    }
    graph.set(relative(ROOT, file), targets);
  }
  return graph;
}

describe("layering", () => {
  const graph = importGraph();

  it("reads the whole house (a sanity check of the reader itself)", () => {
    expect(graph.size).toBeGreaterThan(150);
    expect(graph.get("server.ts")).toContain("app.ts");
  });

  it("no module imports from a floor above its own", () => {
    const upward: string[] = [];
    for (const [file, targets] of graph) {
      for (const target of targets) {
        if (floorOf(target) > floorOf(file)) upward.push(`${file} -> ${target}`);
      }
    }
    expect(upward).toEqual([]);
  });

  it("no modules import each other in a circle", () => {
    const circles: string[] = [];
    const state = new Map<string, "open" | "done">();
    const stack: string[] = [];
    const visit = (file: string) => {
      state.set(file, "open");
      stack.push(file);
      for (const target of graph.get(file) ?? []) {
        if (state.get(target) === "open") circles.push([...stack.slice(stack.indexOf(target)), target].join(" -> "));
        else if (!state.has(target)) visit(target);
      }
      stack.pop();
      state.set(file, "done");
    };
    for (const file of graph.keys()) if (!state.has(file)) visit(file);
    expect(circles).toEqual([]);
  });
});

describe("naming", () => {
  /** Every .tsx file under routes/pages/, its path relative to that folder. */
  const pageFiles = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => (statSync(join(dir, name)).isDirectory() ? pageFiles(join(dir, name)).map((f) => join(name, f)) : /\.tsx?$/.test(name) ? [name] : []));

  it("pages: <name>.tsx holds routes (a Hono app), <name>-page.tsx holds views and no routes", () => {
    const dir = join(ROOT, "routes", "pages");
    const misnamed: string[] = [];
    for (const name of pageFiles(dir)) {
      const source = readFileSync(join(dir, name), "utf8");
      const routes = /new Hono\b/.test(source);
      if (name.endsWith("-page.tsx") && routes) misnamed.push(`${name} is a view file but mounts routes`);
      if (/-routes\.tsx?$/.test(name)) misnamed.push(`${name}: routes go in <name>.tsx`);
    }
    expect(misnamed).toEqual([]);
  });

  it("routes/: route files sit in one folder per family; the top level holds only what the families share", () => {
    const shared = ["access-token.ts", "families.ts", "fast-lane.ts", "middleware.ts", "session.ts"];
    const dir = join(ROOT, "routes");
    const loose = readdirSync(dir).filter((name) => !statSync(join(dir, name)).isDirectory() && !shared.includes(name));
    expect(loose).toEqual([]);
    // app.ts mounts families, never a route file's router by itself.
    expect(readFileSync(join(ROOT, "app.ts"), "utf8")).not.toMatch(/\bapp\.route\(/);
  });

  it("a route family imports no other family's folder: what two families share sits at routes/'s top level, in lib/ or in a plugin's store", () => {
    const familyOf = (file: string) => /^routes\/([^/]+)\//.exec(file)?.[1];
    const across: string[] = [];
    for (const [file, targets] of importGraph()) {
      const own = familyOf(file);
      if (!own) continue;
      for (const target of targets) {
        const theirs = familyOf(target);
        if (theirs && theirs !== own) across.push(`${file} -> ${target}`);
      }
    }
    expect(across).toEqual([]);
  });
});

describe("one table of endpoints", () => {
  // better-auth's endpoint paths are spelled once, in lib/auth-endpoints.ts (AUTH_PATHS); a
  // second spelling is a second table that can drift from the first.
  const spelled = /["'`]\/(?:oauth2\/(?:token|introspect|revoke|userinfo|register)|get-session|device\/code)(?=["'`/])|\/(?:oauth2\/(?:token|introspect|revoke|userinfo|register)|get-session|device\/code)`/g;

  it("finds a spelling where there is one (a sanity check of the pattern)", () => {
    expect('ctx.path === "/oauth2/token"'.match(spelled)).toHaveLength(1);
    expect("`${base}/oauth2/userinfo`".match(spelled)).toHaveLength(1);
    expect('"/oauth2/register/:clientId"'.match(spelled)).toHaveLength(1);
    expect("`${AUTH_PATHS.register}/:clientId`".match(spelled)).toBeNull();
  });

  it("no module but lib/auth-endpoints.ts spells an endpoint path in code", () => {
    const found: string[] = [];
    for (const file of importGraph().keys()) {
      if (file === "lib/auth-endpoints.ts" || file.startsWith("scripts/")) continue;
      const code = readFileSync(join(ROOT, file), "utf8").replace(/^\s*(?:\/\/|\*|\/\*\*).*$/gm, "");
      for (const hit of code.match(spelled) ?? []) found.push(`${file}: ${hit}`);
    }
    expect(found).toEqual([]);
  });
});
