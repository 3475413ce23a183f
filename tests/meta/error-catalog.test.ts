import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorFamilyOf, OAUTH_ROUTES, oauthCodeFor } from "../../lib/error-families.js";
import { isOAuthErrorCode, OAUTH_ERROR_CODES } from "../../lib/errors.js";
import { PROBLEM_CODES } from "../../lib/problem-codes.js";
import { BASE_PATH } from "../../lib/mount-paths.js";
import { ACCOUNT_EMAIL_ERROR_CODES } from "../../plugins/account-email/error-codes.js";
import { ACCOUNT_RESPONSE_ERROR_CODES } from "../../plugins/account-responses/error-codes.js";
import { AGENT_ERROR_CODES } from "../../plugins/agents/error-codes.js";
import { PROFILE_FIELD_ERROR_CODES } from "../../plugins/profile-fields/error-codes.js";
import { KEY_SIGN_IN_ERROR_CODES } from "../../plugins/key-sign-in/error-codes.js";
import { SUBSCRIPTION_ERROR_CODES } from "../../plugins/subscriptions/error-codes.js";
import { SOCIAL_ERROR_CODES } from "../../plugins/social/error-codes.js";
import { registerClient } from "../helpers/oauth.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

/**
 * One catalog per error family (lib/error-families.ts): a route answers only codes its
 * family's catalog holds. The sources are scanned for codes written inline, and a few live
 * answers of each family are checked against the catalogs.
 */
const ROOT = join(import.meta.dirname, "..", "..");

/** Our server-side sources: app.ts, lib/, plugins/ and the JSON routes, in their family folders (the pages word their errors in routes/pages/error-words.ts). */
function sources(): { file: string; text: string }[] {
  const files: string[] = ["app.ts", "auth.config.ts"];
  const walk = (dir: string) => {
    for (const name of readdirSync(join(ROOT, dir))) {
      const path = join(dir, name);
      if (path === join("routes", "pages")) continue;
      if (statSync(join(ROOT, path)).isDirectory()) walk(path);
      else if (/\.tsx?$/.test(name)) files.push(path);
    }
  };
  walk("lib");
  walk("plugins");
  walk("routes");
  return files.map((file) => ({ file, text: readFileSync(join(ROOT, file), "utf8") }));
}

/** The catalogs themselves: the only files where a code is written out. */
const isCatalog = (file: string) => file === join("lib", "problem-codes.ts") || file.endsWith("error-codes.ts");

/**
 * Codes of our dependencies that we answer with on their own endpoints, where they are not
 * in our catalogs: each with the reason.
 */
const DEPENDENCY_OAUTH_CODES: Record<string, string> = {
  // plugins/user-input refuses a non-string oauth_query the way @better-auth/oauth-provider
  // refuses a bad signature on its consent and continue endpoints (better-auth family).
  invalid_signature: "@better-auth/oauth-provider's code for a bad signed oauth_query",
};

describe("error catalogs: sources", () => {
  const all = sources();

  it("writes no problem or better-auth `code` inline: every one is a catalog reference", () => {
    const inline: string[] = [];
    for (const { file, text } of all) {
      if (isCatalog(file)) continue;
      for (const match of text.matchAll(/\bcode:\s*(["'`])[^"'`\n]*\1/g)) inline.push(`${relative(ROOT, join(ROOT, file))}: ${match[0]}`);
    }
    expect(inline).toEqual([]);
  });

  it("answers OAuth errors only from the RFC 6749/6750/7009/7591/8628 list", () => {
    const unknown: string[] = [];
    for (const { file, text } of all) {
      const written = [...text.matchAll(/\berror(?:_code)?:\s*["']([a-z_]+)["']/g), ...text.matchAll(/\bOAuthError\(\s*["']([a-z_]+)["']/g), ...text.matchAll(/\bOAuthErrorCode\s*=\s*["']([a-z_]+)["']/g)];
      for (const [, code] of written) if (!isOAuthErrorCode(code) && !Object.hasOwn(DEPENDENCY_OAUTH_CODES, code!)) unknown.push(`${file}: ${code}`);
    }
    expect(unknown).toEqual([]);
  });

  it("uses every problem code it catalogs", () => {
    const text = all.filter(({ file }) => file !== join("lib", "problem-codes.ts")).map(({ text }) => text).join("\n");
    const unused = Object.keys(PROBLEM_CODES).filter((code) => !new RegExp(`\\.${code}\\b`).test(text));
    expect(unused).toEqual([]);
  });

  it("each plugin with error codes defines them the better-auth way and exposes them as $ERROR_CODES", () => {
    const catalogs = { ACCOUNT_EMAIL_ERROR_CODES, ACCOUNT_RESPONSE_ERROR_CODES, AGENT_ERROR_CODES, PROFILE_FIELD_ERROR_CODES, KEY_SIGN_IN_ERROR_CODES, SOCIAL_ERROR_CODES, SUBSCRIPTION_ERROR_CODES };
    for (const [name, catalog] of Object.entries(catalogs)) {
      for (const [key, entry] of Object.entries(catalog as Record<string, { code: string; message: string }>)) {
        // better-auth's defineErrorCodes: the code is the key; agent-auth's catalog: the key in lower case.
        expect([key, key.toLowerCase()], `${name}.${key}`).toContain(entry.code);
        expect(entry.message, `${name}.${key}`).toMatch(/\S/);
      }
    }
    const withCodes = readdirSync(join(ROOT, "plugins")).filter((dir) => {
      try {
        return statSync(join(ROOT, "plugins", dir, "error-codes.ts")).isFile();
      } catch {
        return false;
      }
    });
    expect(withCodes.sort()).toEqual(["account-email", "account-responses", "agents", "ciba", "key-sign-in", "profile-fields", "social", "subscriptions"]);
    for (const dir of withCodes) expect(readFileSync(join(ROOT, "plugins", dir, "index.ts"), "utf8"), dir).toMatch(/\$ERROR_CODES:/);
  });

  it("gives each problem code a status its title table knows", () => {
    for (const [code, entry] of Object.entries(PROBLEM_CODES)) {
      expect(entry.code).toBe(code);
      expect(entry.status, code).toBeGreaterThanOrEqual(400);
      expect(entry.detail, code).toMatch(/\S/);
    }
  });
});

describe("error families", () => {
  it("maps each route to one family", () => {
    expect(errorFamilyOf(`${BASE_PATH}/oauth2/token`)).toBe("rfc6749");
    expect(errorFamilyOf(`${BASE_PATH}/device/code`)).toBe("rfc6749");
    expect(errorFamilyOf(`${BASE_PATH}/oauth2/authorize`)).toBe("better-auth");
    expect(errorFamilyOf(`${BASE_PATH}/sign-in/email`)).toBe("better-auth");
    expect(errorFamilyOf("/api/backup")).toBe("problem");
    expect(errorFamilyOf("/api/user/bap-ids")).toBe("problem");
    expect(errorFamilyOf("/sign-in")).toBe("html");
    expect(errorFamilyOf("/.well-known/auth")).toBe("problem");
    expect(errorFamilyOf("/api/certificates/signCertificate")).toBe("problem");
  });

  it("names only listed codes for the answers better-auth's router gives on OAuth endpoints", () => {
    expect([...OAUTH_ROUTES.keys()].sort()).toEqual(["/device/code", "/oauth2/bc-authorize", "/oauth2/introspect", "/oauth2/par", "/oauth2/register", "/oauth2/revoke", "/oauth2/token", "/oauth2/userinfo"].map((p) => BASE_PATH + p).sort());
    for (const route of OAUTH_ROUTES.values()) for (const status of [400, 401, 413, 415, 429]) expect(OAUTH_ERROR_CODES).toHaveProperty(oauthCodeFor(route, status));
    expect(oauthCodeFor(OAUTH_ROUTES.get(`${BASE_PATH}/oauth2/userinfo`)!, 401)).toBe("invalid_token");
    expect(oauthCodeFor(OAUTH_ROUTES.get(`${BASE_PATH}/oauth2/register`)!, 400)).toBe("invalid_client_metadata");
  });
});

describe("error catalogs: live answers", () => {
  let server: TestServer;
  let clientId: string;

  beforeAll(async () => {
    server = await startTestServer();
    clientId = (await registerClient(server)).client_id;
  });
  afterAll(async () => {
    await server?.close();
  });

  const form = (path: string, body: string, headers: Record<string, string> = {}) =>
    server.api(path, { method: "POST", body, headers: { "content-type": "application/x-www-form-urlencoded", ...headers } });

  it("answers only listed RFC 6749 codes on the OAuth endpoints", async () => {
    const answers = [
      await form(`${BASE_PATH}/oauth2/token`, "grant_type=nonsense"),
      await form(`${BASE_PATH}/oauth2/token`, `grant_type=authorization_code&code=nope&client_id=${clientId}&code_verifier=${"a".repeat(43)}&redirect_uri=x`),
      await form(`${BASE_PATH}/oauth2/token`, "grant_type=client_credentials", { authorization: `Basic ${Buffer.from("nobody:nothing").toString("base64")}` }),
      await form(`${BASE_PATH}/oauth2/token`, "grant_type=authorization_code&code=a%00b"),
      await server.api(`${BASE_PATH}/oauth2/token`, { body: "{not json" }),
      await server.api(`${BASE_PATH}/oauth2/register`, { body: { redirect_uris: "not a list" } }),
      await server.api(`${BASE_PATH}/oauth2/register`, { body: { redirect_uris: Array.from({ length: 30 }, (_, i) => `https://app.example/${i}`) } }),
      await form(`${BASE_PATH}/oauth2/introspect`, "token=nothing"),
      await form(`${BASE_PATH}/oauth2/revoke`, "token=nothing"),
      await server.api(`${BASE_PATH}/oauth2/userinfo`),
      await server.api(`${BASE_PATH}/oauth2/userinfo`, { headers: { authorization: "Bearer nothing" } }),
      await form(`${BASE_PATH}/device/code`, "client_id=no-such-client"),
    ];
    for (const res of answers) {
      expect(res.status, res.text).toBeGreaterThanOrEqual(400);
      expect(res.headers.get("content-type"), res.text).toMatch(/^application\/json/);
      expect(Object.keys(OAUTH_ERROR_CODES), res.text).toContain(res.json?.error);
    }
  });

  it("answers only catalogued problem codes, with their status, on the JSON routes", async () => {
    const answers = [
      await server.api("/api/backup/sync?bapId=1BAPxxxxxxxxxxxxxxxxxxxxxx", { headers: { "x-auth-token": "nonsense" } }),
      await server.api("/api/backup/sync?bapId=1BAPxxxxxxxxxxxxxxxxxxxxxx", { headers: { authorization: "Bitcoin-Auth nonsense" } }),
      await server.api("/api/backup"),
      await server.api("/api/user/bap-ids"),
      await server.api("/api/agents/hosts/nope", { method: "POST", body: {} }),
      await server.api("/api/no-such-route"),
    ];
    expect(answers.map((res) => res.json.code)).toContain(PROBLEM_CODES.INVALID_AUTH_TOKEN.code);
    for (const res of answers) {
      expect(res.status, res.text).toBeGreaterThanOrEqual(400);
      expect(res.headers.get("content-type"), res.text).toBe("application/problem+json");
      if (res.json.code === undefined) continue;
      expect(Object.keys(PROBLEM_CODES), res.text).toContain(res.json.code);
      expect(res.status, res.text).toBe(PROBLEM_CODES[res.json.code as keyof typeof PROBLEM_CODES].status);
    }
  });
});
