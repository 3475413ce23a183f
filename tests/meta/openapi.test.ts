import { compileErrors, validate } from "@readme/openapi-parser";
import { describe, expect, it } from "vitest";
import { BASE_PATH } from "../../lib/mount-paths.js";
import { useBrowser, useTestServer } from "../helpers/fixtures.js";
import { ResponseValidator } from "../helpers/openapi-validator.js";

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

describe("the response validator (tests/helpers/openapi-validator.ts)", () => {
  const server = useTestServer();

  it("passes a documented answer, and names an undocumented route, status, content type or body", async () => {
    const doc = await (await fetch(`${server.url}/api/openapi.json`)).json();
    const res = await fetch(`${server.url}/api/certificates/types`);
    const answer = { method: "GET", url: "/api/certificates/types", status: res.status, contentType: res.headers.get("content-type"), body: await res.text() };
    expect(new ResponseValidator(doc).check(answer)).toBe("");
    // A route another branch adds without describing it: served, answered, not in the document.
    const without = structuredClone(doc);
    delete without.paths["/api/certificates/types"];
    expect(new ResponseValidator(without).check(answer)).toMatch(/no operation of the document matches GET \/api\/certificates\/types/);
    // Nothing served there: a 404 is no finding.
    expect(new ResponseValidator(without).check({ ...answer, status: 404 })).toBe("");
    expect(new ResponseValidator(doc).check({ ...answer, status: 418 })).toMatch(/lists no 418/);
    expect(new ResponseValidator(doc).check({ ...answer, contentType: "text/plain" })).toMatch(/content type text\/plain/);
    expect(new ResponseValidator(doc).check({ ...answer, body: JSON.stringify({ types: [{ key: 1 }] }) })).toMatch(/body does not match/);
  });

  it("publishes the spec's scheme names, an oauth2 flow with PKCE endpoints and refresh, OpenID Connect discovery and every resource", async () => {
    const doc = await (await fetch(`${server.url}/api/openapi.json`)).json();
    const schemes = doc.components.securitySchemes;
    expect(schemes.apiKeyCookie).toMatchObject({ type: "apiKey", in: "cookie" });
    expect(schemes.apiKeyCookie.name).toMatch(/session_token$/);
    expect(schemes.bearerAuth).toEqual(expect.objectContaining({ type: "http", scheme: "bearer" }));
    expect(schemes.oauth2.flows.authorizationCode).toMatchObject({
      authorizationUrl: `${server.url}${BASE_PATH}/oauth2/authorize`,
      tokenUrl: `${server.url}${BASE_PATH}/oauth2/token`,
      refreshUrl: `${server.url}${BASE_PATH}/oauth2/token`,
    });
    expect(Object.keys(schemes.oauth2.flows.authorizationCode.scopes)).toEqual(expect.arrayContaining(["openid", "profile", "email", "offline_access", "backup:read", "backup:write"]));
    expect(schemes.oauth2.flows.clientCredentials.tokenUrl).toBe(`${server.url}${BASE_PATH}/oauth2/token`);
    expect(schemes.openIdConnect).toEqual(expect.objectContaining({ type: "openIdConnect", openIdConnectUrl: `${server.url}/.well-known/openid-configuration` }));
    const resources = ["User", "Session", "Account", "OauthClient", "Organization", "Member", "Invitation", "Jwks", "Passkey", "OauthRefreshToken", "OauthAccessToken", "OauthConsent", "TwoFactor", "DeviceCode", "AgentHost", "Agent", "AgentCapabilityGrant", "ApprovalRequest"];
    for (const name of resources) expect(doc.components.schemas[name]?.type, name).toBe("object");
    expect(doc.components.schemas.User.properties.image.type).toEqual(["string", "null"]);
    expect(doc.components.schemas.Session.properties.selectedBapId.type).toEqual(["string", "null"]);
    const problem = doc.components.schemas.Problem.properties;
    expect(problem.type.format).toBe("uri-reference");
    expect(problem.status).toMatchObject({ type: "integer", minimum: 400, maximum: 599 });
    expect(problem.errors.items.required).toEqual(["pointer", "reason"]);
    // OpenAPI 3.1: no 3.0 `nullable`, and no success answer described only as "an object".
    expect(JSON.stringify(doc)).not.toContain('"nullable"');
    const vague: string[] = [];
    const noSuccess: string[] = [];
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: Record<string, unknown> }> }> }>>)) {
      for (const [method, op] of Object.entries(item)) {
        const success = Object.entries(op.responses).filter(([status]) => /^[23]/.test(status));
        if (!success.length && path !== "/api/certificates/readiness") noSuccess.push(`${method} ${path}`);
        for (const [, response] of success) for (const media of Object.values(response.content ?? {})) if (JSON.stringify(media.schema) === '{"type":"object"}') vague.push(`${method} ${path}`);
      }
    }
    expect({ noSuccess, vague }).toEqual({ noSuccess: [], vague: [] });
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
