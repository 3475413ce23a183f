import { compileErrors, validate } from "@readme/openapi-parser";
import { describe, expect, it } from "vitest";
import { BASE_PATH } from "../../lib/mount-paths.js";
import { useBrowser, useTestServer } from "../helpers/fixtures.js";

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/** `:id`, `:kind{hosts|agents}` (Hono, better-call) and `{id}` (OpenAPI) all become `{id}`. */
function normalise(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)(\{[^}]*\})?/g, "{$1}");
}

/**
 * What the JSON API serves, as "METHOD /path": the Hono app's routes, and better-auth's
 * endpoints behind the /api/auth catch-all. Left out, on purpose:
 * - Hono routes with method ALL: middleware (`use`), the better-auth catch-all (its endpoints
 *   are listed one by one below) and the 405 answers of routers that list their methods;
 * - wildcard paths (`*`): middleware mounted for one method, e.g. the agents' cross-site refusal;
 * - everything outside /api and /.well-known: the HTML pages and their /assets, which are not
 *   part of the JSON API (openapi/index.ts).
 */
function served(app: { routes: { method: string; path: string }[] }, auth: { api: Record<string, unknown>; options: { disabledPaths?: string[] } }): Set<string> {
  const routes = new Set<string>();
  for (const { method, path } of app.routes) {
    if (method === "ALL" || path.includes("*")) continue;
    if (!path.startsWith("/api/") && !path.startsWith("/.well-known/")) continue;
    routes.add(`${method} ${normalise(path)}`);
  }
  // better-call's router serves every endpoint with a path that is not SERVER_ONLY; better-auth
  // answers its disabledPaths with a 404 before routing.
  const disabled = auth.options.disabledPaths ?? [];
  for (const endpoint of Object.values(auth.api) as { path?: string; options?: { method?: string | string[]; metadata?: { SERVER_ONLY?: boolean } } }[]) {
    if (!endpoint.path || !endpoint.options || endpoint.options.metadata?.SERVER_ONLY || disabled.includes(endpoint.path)) continue;
    const methods = [endpoint.options.method ?? []].flat();
    for (const method of methods) routes.add(`${method} ${BASE_PATH}${normalise(endpoint.path)}`);
  }
  return routes;
}

function documented(doc: { paths: Record<string, Record<string, unknown>> }): Set<string> {
  const routes = new Set<string>();
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of Object.keys(item).filter((m) => METHODS.includes(m))) routes.add(`${method.toUpperCase()} ${normalise(path)}`);
  }
  return routes;
}

describe("the OpenAPI document", () => {
  const server = useTestServer();

  it("is served at /api/openapi.json as OpenAPI 3.1.1, version 1.0.0, public and cacheable", async () => {
    const res = await fetch(`${server.url}/api/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.headers.get("cache-control")).toMatch(/\bpublic\b/);
    const doc = await res.json();
    expect(doc.openapi).toBe("3.1.1");
    expect(doc.info.version).toBe("1.0.0");
    const again = await fetch(`${server.url}/api/openapi.json`, { headers: { "if-none-match": res.headers.get("etag")! } });
    expect(again.status).toBe(304);
  });

  it("validates as OpenAPI 3.1 (@readme/openapi-parser)", async () => {
    const doc = await (await fetch(`${server.url}/api/openapi.json`)).json();
    const result = await validate(structuredClone(doc));
    expect(result.valid ? "" : compileErrors(result)).toBe("");
  });

  it("describes exactly what the app serves: no route missing from it, none listed that is not served", async () => {
    const doc = await (await fetch(`${server.url}/api/openapi.json`)).json();
    const inDoc = documented(doc);
    const inApp = served(server.app, server.auth as never);
    const missing = [...inApp].filter((r) => !inDoc.has(r)).sort();
    const extra = [...inDoc].filter((r) => !inApp.has(r)).sort();
    // A new route: describe it in openapi/paths/<resource>.ts (see openapi/index.ts).
    expect({ missingFromDocument: missing, documentedButNotServed: extra }).toEqual({ missingFromDocument: [], documentedButNotServed: [] });
    expect(inDoc.size).toBeGreaterThan(100);
  });

  it("answers our errors with the shared Problem schema, and the OAuth endpoints with the OAuth error schema", async () => {
    const doc = await (await fetch(`${server.url}/api/openapi.json`)).json();
    expect(doc.paths["/api/backup/sync"].post.responses["400"].content["application/problem+json"].schema).toEqual({ $ref: "#/components/schemas/Problem" });
    expect(doc.paths[`${BASE_PATH}/oauth2/token`].post.responses["400"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/OAuthError" });
    expect(Object.keys(doc.components.securitySchemes)).toEqual(expect.arrayContaining(["apiKeyCookie", "bearerAuth", "oauth2", "openIdConnect", "bitcoinAuth", "clientAuth"]));
  });
});

describe("the API reference page", () => {
  const server = useTestServer();
  const browser = useBrowser();

  it("renders operations from our document with our own script, within its Content-Security-Policy", async () => {
    const page = await browser.page();
    const violations: string[] = [];
    const outside: string[] = [];
    page.on("console", (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    });
    page.on("request", (r) => {
      if (!r.url().startsWith(server.url) && !r.url().startsWith("data:")) outside.push(r.url());
    });
    const res = await page.goto(`${server.url}/api/reference`);
    expect(res?.status()).toBe(200);
    expect(res?.headers()["content-security-policy"]).toContain("script-src 'self'");
    // An operation of ours, by its summary (openapi/paths/well-known.ts): in the first tag, which opens by itself.
    await page.getByText("OpenID Connect discovery document (OIDC Discovery 1.0 §4)").first().waitFor();
    expect(violations).toEqual([]);
    expect(outside).toEqual([]);
  });
});
