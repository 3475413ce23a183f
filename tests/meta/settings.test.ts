import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { EnvSchema, parseSettings, provision } from "../../lib/env.js";
import { BUILT_IN_PROVIDERS } from "../../lib/social-env.js";

/**
 * One schema of settings (lib/env.ts EnvSchema), and the two places that list them for people:
 * .env.example (one `KEY=default` line each) and docs/configuration.md (a table row each, the
 * default in the second cell). Every setting is in all three, with the schema's default.
 */
const ROOT = join(import.meta.dirname, "..", "..");
const example = readFileSync(join(ROOT, ".env.example"), "utf8");
const reference = readFileSync(join(ROOT, "docs/configuration.md"), "utf8");

/** `KEY=value` lines of .env.example. */
const exampleValues = new Map([...example.matchAll(/^([A-Z][A-Z0-9_]*)=(.*)$/gm)].map(([, key, value]) => [key!, value!]));
/** Table rows of the reference: every `KEY` of the first cell -> the second cell. */
const documentedDefaults = new Map(
  [...reference.matchAll(/^\| ([^|]*`[A-Z][^|]*) \| ([^|]*) \|/gm)].flatMap(([, keys, value]) => [...keys!.matchAll(/`([A-Z][A-Z0-9_<>]*)`/g)].map(([, key]) => [key!, value!.trim()] as const)),
);

/** Defaults that are not a literal in the schema: derived from another setting, or the absence of a value means on. */
const DERIVED: Record<string, { example: string; docs: string }> = {
  AUTH_URL: { example: "http://localhost:3000", docs: "`http://localhost:$PORT`" },
  TRUST_PROXY_HOPS: { example: "", docs: "`1` when `TRUST_PROXY=true`, else `0`" },
  RATE_LIMIT_ENABLED: { example: "true", docs: "`true`" },
  STRIPE_API_BASE_URL: { example: "", docs: "`https://api.stripe.com`" },
};

/** What the schema's default looks like in each place: a literal, `false` for an unset switch, or unset. */
function expectedDefault(key: string, schema: unknown): { example: string; docs: string } {
  if (DERIVED[key]) return DERIVED[key];
  const fallback = v.getDefault(schema as v.GenericSchema) as string | undefined;
  if (fallback === undefined) return { example: "", docs: "unset" };
  if (fallback === "") return { example: "false", docs: "`false`" };
  return { example: fallback, docs: `\`${fallback}\`` };
}

/** Social sign-in keys are read by lib/social-env.ts, beside the schema. */
const SOCIAL = [
  ...Object.values(BUILT_IN_PROVIDERS).flatMap(({ env }) => [`${env}_CLIENT_ID`, `${env}_CLIENT_SECRET`]),
  "APPLE_APP_BUNDLE_IDENTIFIER",
];
const isSocial = (key: string) => SOCIAL.includes(key) || /^OIDC_(\d+|<N>)_/.test(key);

describe("settings: lib/env.ts, .env.example and docs/configuration.md", () => {
  const keys = Object.keys(EnvSchema.entries);

  it("reads the three sources (a sanity check of the readers)", () => {
    expect(keys.length).toBeGreaterThan(60);
    expect(exampleValues.get("PORT")).toBe("3000");
    expect(documentedDefaults.get("PORT")).toBe("`3000`");
  });

  it("every setting of the schema is in .env.example with the schema's default", () => {
    const wrong = keys.flatMap((key) => {
      const expected = expectedDefault(key, EnvSchema.entries[key as keyof typeof EnvSchema.entries]).example;
      const got = exampleValues.get(key);
      return got === expected ? [] : [`${key}: ${got === undefined ? "missing" : JSON.stringify(got)}, schema says ${JSON.stringify(expected)}`];
    });
    expect(wrong).toEqual([]);
  });

  it("every setting of the schema is in docs/configuration.md with the schema's default", () => {
    const wrong = keys.flatMap((key) => {
      const expected = expectedDefault(key, EnvSchema.entries[key as keyof typeof EnvSchema.entries]).docs;
      const got = documentedDefaults.get(key);
      return got === expected ? [] : [`${key}: ${got ?? "missing"}, schema says ${expected}`];
    });
    expect(wrong).toEqual([]);
  });

  it("neither lists a setting the service does not read", () => {
    const unknown = [...exampleValues.keys(), ...documentedDefaults.keys()].filter((key) => !(key in EnvSchema.entries) && !isSocial(key));
    expect(unknown).toEqual([]);
    // And the social settings of .env.example are in the reference too.
    const social = [...exampleValues.keys()].filter(isSocial).map((key) => key.replace(/^OIDC_1_/, "OIDC_<N>_"));
    expect(social.filter((key) => !documentedDefaults.has(key))).toEqual([]);
  });
});

describe("settings: parsed without I/O, provisioned apart", () => {
  it("parseSettings reads and writes no file; provision keeps the generated secret and key in DATA_DIR", () => {
    const dir = mkdtempSync(join(tmpdir(), "settings-"));
    const dataDir = join(dir, "data");
    try {
      const settings = parseSettings({ DATA_DIR: dataDir, OUTBOUND_EXTRA_CA_FILE: join(dir, "no-such.pem") });
      expect(existsSync(dataDir)).toBe(false);
      expect(settings.secret).toBeUndefined();
      expect(settings.serverIdentityKey).toBeUndefined();
      expect(settings.outboundExtraCaFile).toBe(join(dir, "no-such.pem"));
      // The CA file named is read by provisioning, which says which setting is wrong.
      expect(() => provision(settings)).toThrow(/OUTBOUND_EXTRA_CA_FILE: cannot read/);
      const config = provision(parseSettings({ DATA_DIR: dataDir }));
      expect(readdirSync(dataDir).sort()).toEqual(["dev-secret", "server-identity-key"]);
      expect(config.secret).toBe(readFileSync(join(dataDir, "dev-secret"), "utf8").trim());
      expect(config.serverIdentityKey).toMatch(/^[0-9a-f]{64}$/);
      expect(config.warnings.join("\n")).toMatch(/BETTER_AUTH_SECRET is not set/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
